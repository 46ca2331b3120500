"""Rule sets as data: TOML files of named boxes from a small vocabulary, compiled to score tables.

A rule set names its boxes (``kind`` from :data:`KINDS` plus a few parameters) and its settings
(RULES.md). Loading validates every key, applies ``--set KEY=VALUE`` overrides and compiles a score
table ``(rolls, boxes)`` once; play and solving are table look-ups from then on.

This module is the rule sets' public face; the code lives by topic in
:mod:`harness.game.ruleset` (:class:`RuleSet`, its boxes and compiled tables, :func:`compile_rules`),
:mod:`harness.game.rulesettings` (the settings, their values and overrides checked) and
:mod:`harness.game.rulefiles` (rule files read, found by name or path, :class:`AllowedRules`,
:func:`load_rules`).
"""

from __future__ import annotations

from harness.game.rulefiles import (
    AllowedRules,
    builtin_rule_sets,
    load_rules,
    looks_like_path,
    read_rules_file,
    read_toml,
    resolve_rules_path,
    rules_dir,
)
from harness.game.ruleset import INLINE_KEYS, KINDS, MAX_POINTS, Box, RuleSet, compile_rules
from harness.game.rulesettings import (
    DEFAULT_SETTINGS,
    SETTINGS,
    Origin,
    check_toml_settings,
    parse_overrides,
    parse_setting,
)

__all__ = [
    "DEFAULT_SETTINGS",
    "INLINE_KEYS",
    "KINDS",
    "MAX_POINTS",
    "SETTINGS",
    "AllowedRules",
    "Box",
    "Origin",
    "RuleSet",
    "builtin_rule_sets",
    "check_toml_settings",
    "compile_rules",
    "load_rules",
    "looks_like_path",
    "parse_overrides",
    "parse_setting",
    "read_rules_file",
    "read_toml",
    "resolve_rules_path",
    "rules_dir",
]
