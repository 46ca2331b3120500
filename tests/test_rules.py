"""Rule sets: every built-in loads, scores match RULES.md, settings work and are range-checked."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.util.errors import UserError
from harness.game.rules import builtin_rule_sets
from harness.game.rules import load_rules as _load_rules
from harness.game.scoring import context, score_options


@cache
def _builtin(name):
    return _load_rules(name)


def load_rules(name, overrides=None):
    """Built-ins compiled once per session: hypothesis calls this hundreds of times."""
    return _builtin(name) if overrides is None else _load_rules(name, overrides)


BUILTIN = ["forced", "generala", "maxi", "scandinavian", "standard", "yahtzee"]


def score(rules, faces, first=False, flag=False, filled=0):
    out = np.empty(rules.n_boxes, dtype=np.int16)
    roll = int(rules.dice.roll_index_of_faces(np.array(faces)))
    score_options(context(rules), roll, first, flag, filled, out)
    return dict(zip(rules.box_names, out.tolist()))


def dice5():
    return st.lists(st.integers(1, 6), min_size=5, max_size=5)


def dice6():
    return st.lists(st.integers(1, 6), min_size=6, max_size=6)


# --- independent reference: brute force over subsets of dice positions -------------------------


def ref_groups(faces, sizes):
    """Best sum of disjoint groups of equal dice with distinct faces, by brute force; None if none fits."""
    best = None
    idx = range(len(faces))

    def rec(avail, k, used_faces, acc):
        nonlocal best
        if k == len(sizes):
            best = acc if best is None else max(best, acc)
            return
        for combo in combinations(sorted(avail), sizes[k]):
            vals = {faces[i] for i in combo}
            if len(vals) == 1 and (f := vals.pop()) not in used_faces:
                rec(avail - set(combo), k + 1, used_faces | {f}, acc + f * sizes[k])

    rec(set(idx), 0, frozenset(), 0)
    return best


def test_builtin_rule_sets_are_all_there():
    assert builtin_rule_sets() == BUILTIN
    for name in BUILTIN:
        load_rules(name)


@pytest.mark.parametrize(
    "name,boxes,perfect",
    [
        ("scandinavian", 15, 374),
        ("standard", 13, 375),
        ("yahtzee", 13, 375),
        ("forced", 15, 374),
        ("generala", 11, None),
        ("maxi", 20, None),
    ],
)
def test_sheet_sizes_and_perfect_scores(name, boxes, perfect):
    r = load_rules(name)
    assert r.n_boxes == boxes
    if perfect is not None:
        assert r.perfect_score() == perfect


def test_scandinavian_perfect_sheet_parts():
    r = load_rules("scandinavian")
    m = dict(zip(r.box_names, r.box_max().tolist()))
    upper = sum(m[b] for b in ("ones", "twos", "threes", "fours", "fives", "sixes"))
    assert (upper, r.bonus_value, sum(m.values()) - upper) == (105, 50, 219)


def test_seed_004_scoring_table_examples():
    r = load_rules("scandinavian")
    assert score(r, [1, 1, 1, 3, 5])["ones"] == 3
    assert score(r, [2, 2, 2, 2, 6])["twos"] == 8
    assert score(r, [6, 6, 4, 4, 1])["one_pair"] == 12
    assert score(r, [6, 6, 4, 4, 1])["two_pairs"] == 20
    assert score(r, [5, 5, 5, 2, 1])["three_of_a_kind"] == 15
    assert score(r, [4, 4, 4, 4, 2])["four_of_a_kind"] == 16
    assert score(r, [4, 4, 4, 4, 2])["two_pairs"] == 0
    assert score(r, [4, 4, 4, 4, 2])["one_pair"] == 8
    assert score(r, [6, 6, 6, 5, 5])["full_house"] == 28
    assert score(r, [6, 5, 4, 3, 2])["chance"] == 20
    assert score(r, [6, 5, 4, 3, 2])["large_straight"] == 20
    assert score(r, [1, 2, 3, 4, 5])["small_straight"] == 15
    assert score(r, [3, 3, 3, 3, 3])["yatzy"] == 50
    assert score(r, [3, 3, 3, 3, 3])["full_house"] == 0


def test_standard_scores_whole_roll_and_runs():
    r = load_rules("standard")
    s = score(r, [2, 2, 2, 2, 6])
    assert s["four_of_a_kind"] == 14 and s["three_of_a_kind"] == 14
    assert score(r, [1, 2, 3, 4, 6])["small_straight"] == 30
    assert score(r, [3, 4, 5, 6, 6])["small_straight"] == 30
    assert score(r, [1, 2, 3, 5, 6])["small_straight"] == 0
    assert score(r, [2, 3, 4, 5, 6])["large_straight"] == 40
    assert score(r, [3, 3, 3, 5, 5])["full_house"] == 25
    assert score(r, [5, 5, 5, 5, 5])["full_house"] == 0


@settings(max_examples=300, deadline=None)
@given(dice5())
def test_scandinavian_boxes_match_brute_force(faces):
    r = load_rules("scandinavian")
    s = score(r, faces)
    c = Counter(faces)
    for f, name in enumerate(("ones", "twos", "threes", "fours", "fives", "sixes"), start=1):
        assert s[name] == f * c[f]
    assert s["one_pair"] == (ref_groups(faces, [2]) or 0)
    assert s["two_pairs"] == (ref_groups(faces, [2, 2]) or 0)
    assert s["three_of_a_kind"] == (ref_groups(faces, [3]) or 0)
    assert s["four_of_a_kind"] == (ref_groups(faces, [4]) or 0)
    fh = ref_groups(faces, [3, 2])
    assert s["full_house"] == (sum(faces) if fh is not None else 0)
    assert s["small_straight"] == (15 if sorted(faces) == [1, 2, 3, 4, 5] else 0)
    assert s["large_straight"] == (20 if sorted(faces) == [2, 3, 4, 5, 6] else 0)
    assert s["chance"] == sum(faces)
    assert s["yatzy"] == (50 if len(c) == 1 else 0)
    if max(c.values()) >= 4:
        assert s["two_pairs"] == 0 or len([v for v in c.values() if v >= 2]) >= 2  # four alike is one pair
    assert all(v <= m for v, m in zip(s.values(), r.box_max().tolist()))


@settings(max_examples=300, deadline=None)
@given(dice6())
def test_maxi_boxes_match_brute_force(faces):
    r = load_rules("maxi")
    s = score(r, faces)
    c = Counter(faces)
    for sizes, name in (
        ([2], "one_pair"),
        ([2, 2], "two_pairs"),
        ([2, 2, 2], "three_pairs"),
        ([3], "three_of_a_kind"),
        ([4], "four_of_a_kind"),
        ([5], "five_of_a_kind"),
        ([3, 2], "full_house"),
        ([3, 3], "castle"),
        ([4, 2], "tower"),
    ):
        assert s[name] == (ref_groups(faces, sizes) or 0), name
    assert s["small_straight"] == (15 if {1, 2, 3, 4, 5} <= set(faces) else 0)
    assert s["large_straight"] == (20 if {2, 3, 4, 5, 6} <= set(faces) else 0)
    assert s["full_straight"] == (21 if set(faces) == {1, 2, 3, 4, 5, 6} else 0)
    assert s["maxi_yatzy"] == (100 if len(c) == 1 else 0)
    assert s["chance"] == sum(faces)
    if len(c) == 1:  # six alike is neither castle, tower nor full house
        assert s["castle"] == s["tower"] == s["full_house"] == 0


@settings(max_examples=200, deadline=None)
@given(dice5(), st.sampled_from(["standard", "yahtzee", "generala", "scandinavian"]))
def test_scores_bounded_and_upper_is_face_times_count(faces, name):
    r = load_rules(name)
    for first in (False, True):
        s = score(r, faces, first=first)
        assert all(0 <= v <= m for v, m in zip(s.values(), r.box_max().tolist()))
        for b in r.boxes:
            if b.is_upper:
                f = b.param("face")
                assert s[b.name] == f * faces.count(f)


def test_generala_servida_and_double():
    r = load_rules("generala")
    assert score(r, [2, 3, 4, 5, 6])["straight"] == 20
    assert score(r, [2, 3, 4, 5, 6], first=True)["straight"] == 25
    assert score(r, [3, 3, 3, 2, 2], first=True)["full_house"] == 35
    assert score(r, [3, 3, 3, 3, 2])["poker"] == 40
    assert score(r, [3, 3, 3, 3, 3])["poker"] == 40  # five alike also fits
    assert score(r, [4, 4, 4, 4, 4], first=True)["generala"] == 60
    assert score(r, [4, 4, 4, 4, 4])["double_generala"] == 0  # generala box not holding a generala
    g = r.box_index("generala")
    assert score(r, [4, 4, 4, 4, 4], flag=True, filled=1 << g)["double_generala"] == 100
    assert r.bonus_value == 0


def test_yahtzee_joker_and_extra_bonus():
    r = load_rules("yahtzee")
    ctx, out = context(r), np.empty(r.n_boxes, dtype=np.int16)
    y = r.box_index("yatzy")
    roll = int(r.dice.roll_index_of_faces(np.array([4, 4, 4, 4, 4])))
    # yatzy box holds 50: +100, and the matching upper box (fours) is forced
    allowed, extra = score_options(ctx, roll, False, True, 1 << y, out)
    assert extra == 100 and allowed == 1 << r.box_index("fours")
    # fours filled: any open lower box, full house/straights score as joker
    fours = r.box_index("fours")
    allowed, extra = score_options(ctx, roll, False, True, (1 << y) | (1 << fours), out)
    lower = [b for b in range(r.n_boxes) if not r.boxes[b].is_upper and b != y]
    assert allowed == sum(1 << b for b in lower)
    s = dict(zip(r.box_names, out.tolist()))
    assert (s["full_house"], s["small_straight"], s["large_straight"]) == (25, 30, 40)
    # scratched yatzy box: joker still applies, the +100 does not
    allowed, extra = score_options(ctx, roll, False, False, 1 << y, out)
    assert extra == 0 and allowed == 1 << fours
    # standard has no joker: five alike is just a roll
    std = load_rules("standard")
    assert score(std, [4, 4, 4, 4, 4], flag=True, filled=1 << std.box_index("yatzy"))["full_house"] == 0


def test_settings_change_scoring():
    r = load_rules("scandinavian", ["yatzy_scoring=flat_plus_sum", "full_house_scoring=flat"])
    assert score(r, [6, 6, 6, 6, 6])["yatzy"] == 80
    assert score(r, [6, 6, 6, 5, 5])["full_house"] == 25
    assert _load_rules("scandinavian", {"include_pairs": False}).n_boxes == 13
    assert load_rules("maxi", ["include_pairs=false"]).n_boxes == 17
    f = load_rules("forced")
    assert f.forced and f.threshold == 42
    assert load_rules("scandinavian", ["forced=true", "forced_bonus_threshold=50"]).threshold == 50
    assert load_rules("scandinavian", ["upper_bonus_threshold=62"]).threshold == 62


def test_forced_allows_only_the_next_box():
    r = load_rules("forced")
    ctx, out = context(r), np.empty(r.n_boxes, dtype=np.int16)
    allowed, _ = score_options(ctx, 0, False, False, 0b111, out)
    assert allowed == 1 << 3


@pytest.mark.parametrize("name", BUILTIN)
def test_score_sheet_is_score_options_for_every_roll(name):
    """The table-at-a-time kernel of the solver bot gives score_options' values on random sheets
    (key box filled or not, flag, first roll), the joker and extra-bonus rolls included."""
    from harness.game.scoring import score_sheet

    rules = load_rules(name)
    ctx = context(rules)
    n, nbx = rules.dice.n_rolls, rules.n_boxes
    rng = np.random.default_rng(7)
    sheets = [0, (1 << nbx) - 2, *rng.integers(0, 1 << nbx, 40).tolist()]
    if rules.key_box >= 0:
        sheets += [m | (1 << rules.key_box) for m in sheets]
    if rules.forced:
        sheets = [(1 << k) - 1 for k in range(nbx)]
    rows, allowed, extras = np.empty((n, nbx), np.int16), np.empty(n, np.int64), np.empty(n, np.int16)
    out = np.empty(nbx, np.int16)
    for filled in sheets:
        for first in (False, True):
            for flag in (False, True) if rules.key_box >= 0 else (False,):
                score_sheet(ctx, first, flag, filled, rows, allowed, extras)
                for r in range(n):
                    a, e = score_options(ctx, r, first, flag, filled, out)
                    assert (a, e) == (allowed[r], extras[r]) and np.array_equal(out, rows[r]), (filled, first, r)


@pytest.mark.parametrize(
    "override,message",
    [
        (["upper_bonus_threshold=106"], "out of range 0..105"),
        (["upper_bonus_value=7"], "step 5"),
        (["columns=7"], "out of range 1..6"),
        (["yatzy_scoring=double"], "must be one of"),
        (["forced=maybe"], "true or false"),
        (["colour=red"], "unknown setting 'colour'"),
        (["threshold"], "expected KEY=VALUE"),
    ],
)
def test_bad_settings_name_the_fault(override, message):
    with pytest.raises(UserError, match=message):
        load_rules("scandinavian", override)


def test_setting_that_does_not_apply_is_refused():
    with pytest.raises(UserError, match="include_pairs: does not apply"):
        load_rules("standard", ["include_pairs=false"])
    assert load_rules("maxi", ["upper_bonus_threshold=126"]).threshold == 126


def test_unknown_rule_set_and_bad_files(tmp_path):
    with pytest.raises(UserError, match="unknown rule set 'nope'"):
        load_rules("nope")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [unclosed")
    with pytest.raises(UserError, match="not valid TOML"):
        load_rules(str(bad))
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('name = "w"\n[[boxes]]\nname = "x"\nkind = "sevens"\n')
    with pytest.raises(UserError, match="unknown kind 'sevens'"):
        load_rules(str(wrong))
    with pytest.raises(UserError, match="not found"):
        load_rules(str(tmp_path / "missing.toml"))


def test_user_rule_file_with_house_rule(tmp_path):
    house = tmp_path / "house.toml"
    house.write_text('extends = "scandinavian"\nname = "house"\n[settings]\nupper_bonus_value = 100\n')
    r = load_rules(str(house))
    assert r.name == "house" and r.bonus_value == 100 and r.n_boxes == 15
    assert r.digest != load_rules("scandinavian").digest


def test_digest_depends_on_content_not_file_name(tmp_path):
    copy = tmp_path / "renamed.toml"
    copy.write_text('extends = "scandinavian"\nname = "renamed"\n')
    assert load_rules(str(copy)).digest == load_rules("scandinavian").digest


@settings(max_examples=300, deadline=None)
@given(dice5())
def test_standard_and_generala_boxes_match_brute_force(faces):
    s = score(load_rules("standard"), faces)
    c = Counter(faces)
    runs = [set(range(a, a + 4)) for a in (1, 2, 3)]
    assert s["three_of_a_kind"] == (sum(faces) if max(c.values()) >= 3 else 0)
    assert s["four_of_a_kind"] == (sum(faces) if max(c.values()) >= 4 else 0)
    assert s["full_house"] == (25 if sorted(c.values()) == [2, 3] else 0)
    assert s["small_straight"] == (30 if any(r <= set(faces) for r in runs) else 0)
    assert s["large_straight"] == (40 if set(faces) in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}) else 0)
    assert s["yatzy"] == (50 if len(c) == 1 else 0)
    g = score(load_rules("generala"), faces)
    gf = score(load_rules("generala"), faces, first=True)
    assert g["poker"] == (40 if max(c.values()) >= 4 else 0) and gf["poker"] == (45 if g["poker"] else 0)
    assert g["full_house"] == (30 if sorted(c.values()) == [2, 3] else 0)
    assert g["straight"] == (20 if set(faces) in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}) else 0)


def test_generic_groups_kind_and_options(tmp_path):
    f = tmp_path / "groups.toml"
    f.write_text(
        'name = "g"\ndice = 5\n'
        '[[boxes]]\nname = "pair_and_triple"\nkind = "groups"\nsizes = [3, 2]\nscore = "matching"\n'
        '[[boxes]]\nname = "house_any"\nkind = "full_house"\nfive_alike = true\n'
        '[[boxes]]\nname = "run_sum"\nkind = "run"\nlength = 3\nscore = "sum"\n'
    )
    r = _load_rules(str(f), ["full_house_scoring=flat"])
    assert score(r, [2, 2, 2, 5, 5]) == {"pair_and_triple": 16, "house_any": 25, "run_sum": 0}
    assert score(r, [4, 4, 4, 4, 4])["house_any"] == 25  # five alike counts when the box says so
    assert score(r, [1, 2, 3, 4, 5])["run_sum"] == 12  # best run of three: 3+4+5


# --- extends: cycles, paths relative to the extending file (issue 9) ----------------------------


def test_circular_extends_is_one_line_naming_the_cycle(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    (tmp_path / "self.toml").write_text('extends = "self.toml"\n')
    with pytest.raises(UserError, match=r"^circular extends: a\.toml -> b\.toml -> a\.toml$"):
        load_rules("a.toml")
    with pytest.raises(UserError, match=r"^circular extends: self\.toml -> self\.toml$"):
        load_rules("self.toml")


def test_relative_extends_is_taken_from_the_extending_files_directory(tmp_path, monkeypatch):
    house = tmp_path / "house"
    (house / "base").mkdir(parents=True)
    (house / "base" / "parent.toml").write_text('extends = "scandinavian"\n[settings]\nupper_bonus_value = 100\n')
    (house / "child.toml").write_text('extends = "base/parent.toml"\n[settings]\nupper_bonus_threshold = 60\n')
    (house / "base" / "up.toml").write_text('extends = "../child.toml"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    r = load_rules(str(house / "child.toml"))
    assert (r.name, r.bonus_value, r.threshold, r.n_boxes) == ("child", 100, 60, 15)
    assert load_rules("../house/base/up.toml").bonus_value == 100
    (house / "bad.toml").write_text('extends = "missing.toml"\n')
    with pytest.raises(UserError, match=r"bad\.toml: extends: rule set file not found: .*house/missing\.toml"):
        load_rules(str(house / "bad.toml"))


# --- scoring settings against fixed servida/joker scores (issue 9) ------------------------------


@pytest.mark.parametrize(
    "name,override,box",
    [
        ("generala", "yatzy_scoring=flat_plus_sum", "'generala' has fixed scores 50 / servida 60"),
        ("generala", "full_house_scoring=sum", "'full_house' has fixed scores 30 / servida 35"),
        ("yahtzee", "full_house_scoring=sum", "'full_house' has fixed scores 25 / joker 25"),
    ],
)
def test_scoring_setting_contradicting_a_fixed_score_is_refused(name, override, box):
    key = override.split("=")[0]
    with pytest.raises(
        UserError,
        match=rf"^--set {override}: not allowed on rule set '{name}' \(box {box}; "
        rf"only {key}=flat fits\)$",
    ):
        load_rules(name, [override])


def test_house_rule_file_cannot_smuggle_a_contradicting_setting(tmp_path):
    f = tmp_path / "loud.toml"
    f.write_text('extends = "generala"\n[settings]\nyatzy_scoring = "flat_plus_sum"\n')
    with pytest.raises(UserError, match=r"loud\.toml \[settings\] yatzy_scoring='flat_plus_sum': not allowed"):
        load_rules(str(f))


@pytest.mark.parametrize("name", BUILTIN)
def test_no_accepted_setting_lets_a_plain_score_pass_its_servida_or_joker(name):
    """Every combination of the scoring settings a rule set accepts keeps servida >= plain and the
    joker score equal to the plain score of the box kind's flat value."""
    for ys in ("flat", "flat_plus_sum"):
        for fh in ("flat", "sum"):
            try:
                r = load_rules(name, {"yatzy_scoring": ys, "full_house_scoring": fh})
            except UserError as exc:
                assert "not allowed" in str(exc) or "does not apply" in str(exc)
                continue
            for j, b in enumerate(r.boxes):
                if b.servida is not None:
                    assert (r.table_first[:, j] >= r.table[:, j]).all(), (name, ys, fh, b.name)
                if b.joker_value is not None:
                    assert r.table[:, j].max() == b.joker_value, (name, ys, fh, b.name)


def test_settings_that_fit_are_still_accepted():
    assert load_rules("generala", ["yatzy_scoring=flat", "upper_bonus_value=35"]).bonus_value == 35
    assert score(load_rules("yahtzee", ["yatzy_scoring=flat_plus_sum"]), [6] * 5)["yatzy"] == 80
    assert score(load_rules("standard", ["full_house_scoring=sum"]), [6, 6, 6, 5, 5])["full_house"] == 28


# --- describe() and `rules` show the effective rule set (issue 9) -------------------------------


def _cli(capsys, *argv):
    from harness.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_house_rule_header_shows_its_own_bonus(tmp_path, capsys):
    house = tmp_path / "my_house.toml"
    house.write_text('extends = "scandinavian"\n[settings]\nupper_bonus_value = 100\n')
    d = load_rules(str(house)).describe()
    assert (d["name"], d["title"]) == ("my_house", "my_house")
    assert d["description"] == "Scandinavian Yatzy with upper_bonus_value=100"
    assert d["bonus"] == {"threshold": 63, "value": 100} and "upper bonus 100 at 63" in d["summary"]
    code, out, _ = _cli(capsys, "rules", "show", str(house))
    head = out.splitlines()[:2]
    assert code == 0 and "50" not in head[0] and "upper bonus 100 at 63" in head[1], head


def test_describe_reports_overrides_and_with_settings_keeps_them():
    r = load_rules("scandinavian", ["upper_bonus_value=100", "include_pairs=false"])
    d = r.describe()
    assert d["overrides"] == {"upper_bonus_value": 100, "include_pairs": False}
    assert d["summary"].startswith("5 dice, 13 boxes, upper bonus 100 at 63") and len(d["boxes"]) == 13
    assert d["perfect_score"] == 374 - 34 + 50
    again = r.with_settings(["columns=2"])
    assert (again.bonus_value, again.n_boxes, again.columns) == (100, 13, 2)
    assert load_rules("forced").describe()["bonus"] == {"threshold": 42, "value": 50}
    for name in BUILTIN:  # descriptions state no number a setting can change
        d = load_rules(name).describe()
        assert "bonus" not in d["description"] and not re.search(r"\d (dice|boxes)", d["description"]), name


def test_rules_name_is_rules_show_name(capsys):
    _, shown, _ = _cli(capsys, "rules", "show", "scandinavian", "--set", "columns=2")
    code, short, _ = _cli(capsys, "rules", "scandinavian", "--set", "columns=2")
    assert code == 0 and short == shown and "changed by --set: columns=2" in short
    code, listing, _ = _cli(capsys, "rules")
    assert code == 0 and all(name in listing for name in BUILTIN)
    for argv, message in (
        (["rules", "show"], "rules show needs a rule set NAME"),
        (["rules", "standard", "maxi"], "rules takes one rule set, got 'standard' and 'maxi'"),
        (["rules", "--set", "columns=2"], "--set needs a rule set"),
    ):
        code, _, err = _cli(capsys, *argv)
        assert code == 2 and message in err and err.count("\n") == 1, err


def test_rules_help_has_examples(capsys):
    with pytest.raises(SystemExit):
        _cli(capsys, "rules", "--help")
    out = capsys.readouterr().out
    assert "[show] [NAME]" in out and "examples:\n  yatzy-harness rules\n" in out


# --- configs/rules/README.md cannot silently rot ------------------------------------------------


def test_rules_readme_names_every_rule_set_box_kind_and_setting():
    from pathlib import Path

    from harness.game.rules import KINDS, SETTINGS

    text = (Path(__file__).resolve().parent.parent / "configs" / "rules" / "README.md").read_text()
    names = set(BUILTIN) | set(KINDS) | set(SETTINGS)
    for name in BUILTIN:
        names |= set(load_rules(name).box_names)
    missing = sorted(n for n in names if f"`{n}`" not in text)
    assert not missing, f"configs/rules/README.md does not name {missing}"
    # each rule set's section states its perfect sheet and the maxima of the boxes in its table
    for name in BUILTIN:
        section = text.split(f"## `{name}`")[1].split("\n## ")[0]
        r = load_rules(name)
        assert f"Perfect sheet {r.perfect_score()}" in section or f"perfect sheet {r.perfect_score()}" in section, name
        m = dict(zip(r.box_names, r.box_max().tolist()))
        rows = re.findall(r"^\| `(\w+)` \|.*\| (\d+) \|$", section, flags=re.M)
        assert all(m[box] == int(v) for box, v in rows), (name, rows)
        assert len(rows) in (0, r.n_boxes - 6), (name, len(rows))


def test_a_rule_file_is_compiled_once_while_it_is_unchanged(tmp_path):
    """load_rules compiles a file once per process (every reader of a run loads its rules) and
    again when the file changes."""
    import os
    from pathlib import Path

    from harness.game.rules import load_rules

    path = tmp_path / "house.toml"
    path.write_text(Path(load_rules("scandinavian").source).read_text())
    first = load_rules(str(path))
    assert load_rules(str(path)) is first
    bigger = load_rules(str(path), ["upper_bonus_value=100"])
    assert bigger is not first and bigger.bonus_value == 100 and first.bonus_value == 50
    text = path.read_text().replace("upper_bonus_value = 50", "upper_bonus_value = 60")
    assert text != path.read_text()
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a new time even within one clock tick
    again = load_rules(str(path))
    assert again is not first and again.bonus_value == 60


def test_a_misspelt_top_key_names_the_key_it_is_near_and_lists_extends(tmp_path):
    """A house-rule file with ``extnds`` (a typo of ``extends``) is told the key it meant, and the
    keys listed are those a rule file may hold, ``extends`` among them."""
    f = tmp_path / "typo.toml"
    f.write_text('extnds = "scandinavian"\nname = "typo"\n')
    with pytest.raises(UserError) as err:
        load_rules(str(f))
    msg = str(err.value)
    assert "unknown key 'extnds' (did you mean 'extends'? keys: boxes, " in msg and "extends, " in msg
