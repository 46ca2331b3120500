"""Game records are untrusted input (issue "Untrusted logs"): whatever a line of a site's log holds,
reading it never crashes, never loses the other games, and every line is a game or one bad game
named with its line number and one reason."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.records.record import GameRecord, read_records, record_from_trace
from harness.play.replay import replay

SEATS = ("greedy", "timeout")
#: a line nested 1,000 lists deep, and a number of more digits than Python converts (4,300)
NESTED = "[" * 1000 + "]" * 1000
HUGE_NUMBER = '{"format": "yatzy-record/1", "game": ' + "9" * 4301 + "}"


def _record(game: int, rules: str = "scandinavian", settings: tuple[str, ...] = (), seats=SEATS) -> GameRecord:
    trace, res = replay(rules, list(settings), list(seats), 7, game)
    return record_from_trace(
        trace, rules_name=rules, rules=res.rules, seats=seats, game=game, seed=7, totals=res.total[0].tolist()
    )


@pytest.fixture(scope="module")
def lines() -> list[str]:
    """Three valid records (games 0, 1, 2), one JSON line each."""
    return [_record(g).to_json() for g in range(3)]


def _write(path: Path, rows: list[str | bytes]) -> Path:
    data = b"".join((r if isinstance(r, bytes) else r.encode()) + b"\n" for r in rows)
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def _commands(path: Path, out: Path) -> list[list[str]]:
    """Every command that reads records, on ``path`` (game 0 is valid in every file here)."""
    return [
        ["records", str(path)],
        ["analyse", str(path), "--no-plots", "--out", str(out)],
        ["fit", str(path), "--model", "solver:temperature"],
        ["advise", "--record", str(path), "--game", "0", "--seat", "0", "--turn", "1", "--roll", "1"],
    ]


# ---------------------------------------------------------------------------------------------
# 1. nesting and numbers past what JSON reading allows


@pytest.mark.parametrize(
    "poison", [NESTED, HUGE_NUMBER, NESTED.replace("[", '{"a":').replace("]", "}")], ids=["lists", "number", "objects"]
)
def test_a_line_nested_too_deep_or_with_too_long_a_number_is_one_bad_game(tmp_path, lines, poison):
    path = _write(tmp_path / "games.jsonl", [lines[0], poison, lines[1]])
    res = read_records(path)
    assert [g.game for g in res.games] == [0, 1]
    (bad,) = res.errors
    assert bad.message.startswith(f"{path} line 2: not a record: ") and "\n" not in bad.message
    assert res.summary == f"{path}: 2 games read, 1 bad game skipped"


def test_deep_values_inside_a_record_are_one_bad_game_each(tmp_path, lines):
    deep: object = 1
    for _ in range(900):
        deep = [deep]
    rows = []
    for key in ("meta", "seats", "totals", "seed"):
        d = json.loads(lines[0])
        d["game"], d[key] = key, {"x": deep} if key == "meta" else deep
        rows.append(json.dumps(d))
    res = read_records(_write(tmp_path / "g.jsonl", [lines[1], *rows]))
    assert [g.game for g in res.games] == [1] and [b.game for b in res.errors] == ["meta", "seats", "totals", "seed"]
    assert all(len(b.message) < 300 for b in res.errors)  # the value is shown cut short, not whole


@pytest.mark.parametrize("poison", [NESTED, HUGE_NUMBER], ids=["nested", "number"])
def test_every_command_reading_records_survives_such_a_line(tmp_path, lines, poison, capsys, monkeypatch):
    """Each command reading records takes such a line as one bad game, and draws a progress bar of
    the records read (stderr is a terminal here; issue 18 item 9)."""
    import sys

    path = _write(tmp_path / "games.jsonl", [lines[0], poison, lines[1]])
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # the captured stderr, as a terminal
    for argv in _commands(path, tmp_path / "out"):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == (1 if argv[0] == "records" else 0), (argv, err)
        assert "Traceback" not in err and "reading records" in err
        if argv[0] != "advise":
            assert f"{path} line 2: not a record" in err


def test_the_progress_bar_is_drawn_on_a_terminal_only(tmp_path, lines, capsys, monkeypatch):
    """The bar of the records read (issue 18 item 9): none with --quiet, none into a file or a pipe
    (every command's bar: test_every_command_reading_records_survives_such_a_line), and the output
    is the same either way."""
    import sys

    path = _write(tmp_path / "games.jsonl", [lines[0], "{", lines[1]])
    got = []
    for tty, quiet in ((True, False), (True, True), (False, False)):
        monkeypatch.setattr(sys.stderr, "isatty", lambda tty=tty: tty)  # the captured stderr
        assert main(["records", str(path), *(["--quiet"] if quiet else [])]) == 1
        out, err = capsys.readouterr()
        assert ("reading records" in err) == (tty and not quiet)
        assert f"{path} line 2: not valid JSON" in err
        got.append(out)
    assert got[0] == got[1] == got[2] == f"{path}: 2 games read, 1 bad game skipped\n"


# ---------------------------------------------------------------------------------------------
# 2. bytes: each line decoded on its own


@pytest.mark.parametrize("name", ["games.jsonl", "games.jsonl.gz"])
def test_a_line_that_is_not_utf8_is_one_bad_game_with_its_line_number(tmp_path, lines, name):
    d = json.loads(lines[1])
    d["seats"][0] = {"name": "Jørgen"}
    latin1 = json.dumps(d, ensure_ascii=False).encode("latin-1")  # a site that wrote latin-1
    path = _write(tmp_path / name, [lines[0], latin1, lines[2]])
    res = read_records(path)
    assert [g.game for g in res.games] == [0, 2]
    (bad,) = res.errors
    col = latin1.index(b"\xf8") + 1
    assert bad.message == f"{path} line 2: not UTF-8 text (byte 0xf8 at byte {col} of the line)"


def test_a_byte_order_mark_at_the_start_is_skipped(tmp_path, lines):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode() + b"\n")
    res = read_records(path)
    assert [g.game for g in res.games] == [0, 1, 2] and res.errors == []
    # only at the start: inside the file it is a byte of a line like any other
    path.write_bytes(("\n".join(lines[:1]) + "\n").encode() + b"\xef\xbb\xbf" + lines[1].encode() + b"\n")
    assert [b.message.split(": ", 1)[1] for b in read_records(path).errors] == [
        "not valid JSON (Unexpected UTF-8 BOM (decode using utf-8-sig) at column 1)"
    ]


def test_windows_line_ends_and_blank_lines(tmp_path, lines):
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(b"\r\n".join(x.encode() for x in [lines[0], "", " \t", lines[1]]) + b"\r\n")
    res = read_records(path)
    assert [g.game for g in res.games] == [0, 1] and res.errors == [] and res.places == ["line 1", "line 4"]


def test_a_gzip_file_damaged_part_way_keeps_the_games_before_the_damage(tmp_path):
    recs = [_record(g).to_json() for g in range(3)] * 1
    many = [json.dumps({**json.loads(recs[g % 3]), "game": g}) for g in range(60)]
    data = gzip.compress(("\n".join(many) + "\n").encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) * 2 // 3])
    res = read_records(path, validate=False)
    assert 0 < len(res.games) < 60 and [g.game for g in res.games] == list(range(len(res.games)))
    (bad,) = res.errors
    assert bad.message.startswith(f"{path} line ") and "cannot be read from here on" in bad.message


# ---------------------------------------------------------------------------------------------
# 3. duplicate game ids


def test_a_second_line_with_a_game_id_is_a_bad_game_for_every_reader(tmp_path, lines, capsys):
    path = _write(tmp_path / "dup.jsonl", [lines[0], lines[1], lines[0], lines[0]])
    res = read_records(path)
    assert [g.game for g in res.games] == [0, 1]
    assert [b.message for b in res.errors] == [
        f"{path} line 3: duplicate game id 0, first on line 1",
        f"{path} line 4: duplicate game id 0, first on line 1",
    ]
    assert [b.game for b in res.errors] == [0, 0]
    assert main(["records", str(path)]) == 1
    assert capsys.readouterr().out == f"{path}: 2 games read, 2 bad games skipped\n"
    assert main(["analyse", str(path), "--no-plots", "--out", str(tmp_path / "a"), "--json"]) == 0
    cap = capsys.readouterr()
    d = json.loads(cap.out)
    assert d["games"] == 2 and [p["games"] for p in d["players"]] == [2, 2] and cap.err.count("duplicate") == 2
    assert main(["fit", str(path), "--model", "solver:temperature", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["games"] == 2
    # advise takes the game the id names: its first line
    assert main(["advise", "--record", str(path), "--game", "0", "--seat", "0", "--turn", "1", "--roll", "1"]) == 0


def test_the_same_id_in_two_lineups_of_a_parquet_file_is_two_games(tmp_path, lines):
    from harness.records.record import write_records_parquet

    recs = [GameRecord.from_json(x) for x in (lines[0], lines[0], lines[1], lines[1])]
    path = write_records_parquet(tmp_path / "g.parquet", recs, lineups=[0, 1, 0, 0])
    res = read_records(path)
    assert res.lineups == [0, 1, 0] and [b.message for b in res.errors] == [
        f"{path} row 3: duplicate game id 1 of lineup 0, first on row 2"
    ]


# ---------------------------------------------------------------------------------------------
# 4. analyse lists every bad game and skips what it cannot value


def test_analyse_skips_games_it_cannot_value_and_lists_every_bad_game(tmp_path, lines, capsys):
    saved = _record(5, "standard", ("saved_rolls=true",), ("greedy",)).to_json()
    partial = json.loads(lines[2])
    partial["turns"], partial["complete"] = partial["turns"][:4], False
    del partial["totals"]
    path = _write(tmp_path / "mixed.jsonl", [saved, lines[0], "{not json", json.dumps(partial), lines[1]])
    assert main(["analyse", str(path), "--no-plots", "--out", str(tmp_path / "a"), "--json"]) == 0
    cap = capsys.readouterr()
    d = json.loads(cap.out)
    assert d["games"] == 2 and len(d["bad_games"]) == 3
    err = cap.err.splitlines()
    assert len(err) == 3
    assert err[0].startswith(f"{path} line 3: not valid JSON")
    assert err[1].startswith(f"{path} line 1: game 5: not analysed: rule set standard: saved_rolls is on")
    assert err[2].startswith(f"{path} line 4: game 2: a partial game")


def test_no_usable_game_lists_every_bad_game(tmp_path, lines, capsys):
    saved = [_record(g, "standard", ("saved_rolls=true",), ("greedy",)).to_json() for g in (5, 6)]
    path = _write(tmp_path / "none.jsonl", ["{", "[]", lines[0].replace('"score":', '"score": 1000, "x":', 1)])
    for argv in _commands(path, tmp_path / "out"):
        assert main(argv) == 2
        err = capsys.readouterr().err.splitlines()
        assert [x.split(": ", 1)[0] for x in err[:3]] == [f"{path} line {i}" for i in (1, 2, 3)], argv
        assert err[3] == f"yatzy-harness: error: {path}: no usable game (3 bad, listed above)" and len(err) == 4
    path = _write(tmp_path / "saved.jsonl", ["{", *saved])
    assert main(["analyse", str(path), "--no-plots", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 4 and sum("saved_rolls is on" in x for x in err) == 2
    assert err[-1] == f"yatzy-harness: error: {path}: no game to analyse (3 skipped, listed above)"


# ---------------------------------------------------------------------------------------------
# 5. a rule file, run config or levels file that is not UTF-8


LATIN1_RULES = 'name = "hus"\ntitle = "J\xf8rgens hus"\n[[boxes]]\nname = "chance"\nkind = "chance"\n'.encode("latin-1")


def _not_utf8(path: Path) -> str:
    return f"{path}: not UTF-8 text (byte 0xf8 at line 2, column 11)"


@pytest.mark.parametrize("what", ["rules", "run config", "levels"])
def test_a_toml_file_that_is_not_utf8_is_one_line_naming_it(tmp_path, capsys, what):
    from harness.players.levels import load_levels
    from harness.util.errors import UserError
    from harness.game.rules import load_rules
    from harness.play.runconfig import RunConfig

    path = tmp_path / f"{what.replace(' ', '_')}.toml"
    if what == "rules":
        path.write_bytes(LATIN1_RULES)
        load, argv = load_rules, ["rules", "show", str(path)]
    elif what == "run config":
        path.write_bytes('seats = ["greedy"]\n# Jorgen J\xf8rgen\n'.encode("latin-1"))
        load, argv = RunConfig.from_toml, ["run", str(path)]
    else:
        path.write_bytes('rules = "scandinavian"\n# Jorgen J\xf8rgen\n'.encode("latin-1"))
        load, argv = load_levels, ["calibrate", "--levels", str(path)]
    with pytest.raises(UserError) as exc:
        load(str(path))
    assert str(exc.value).startswith(_not_utf8(path))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"yatzy-harness: error: {_not_utf8(path)}") and err.count("\n") == 1


def test_a_record_whose_rule_file_is_not_utf8_is_a_bad_game_naming_the_file(tmp_path, lines):
    rules = tmp_path / "hus.toml"
    rules.write_bytes(LATIN1_RULES)
    d = json.loads(lines[0])
    d["game"], d["rules"] = 9, {"name": str(rules), "settings": {}}
    res = read_records(_write(tmp_path / "g.jsonl", [lines[1], json.dumps(d)]), rules_dirs=[tmp_path])
    assert [g.game for g in res.games] == [1]
    assert res.errors[0].message.startswith(f"{tmp_path / 'g.jsonl'} line 2: game 9: rules {rules}: {_not_utf8(rules)}")


# ---------------------------------------------------------------------------------------------
# 6. a rule set from a record: every value checked before it is used (the inline form)

#: a small rule set with a box of every kind (two dice: it compiles in milliseconds)
TINY = {
    "name": "tiny",
    "dice": 2,
    "rolls": 2,
    "key_box": "yatzy",
    "joker": True,
    "extra_yatzy_bonus": 10,
    "settings": {"upper_bonus_threshold": 6, "upper_bonus_value": 5},
    "boxes": [
        {"name": "sixes", "kind": "upper", "face": 6},
        {"name": "pair", "kind": "n_of_a_kind", "n": 2, "score": "matching"},
        {"name": "pairs", "kind": "pairs", "count": 1},
        {"name": "house", "kind": "full_house", "value": 25, "five_alike": False},
        {"name": "castle", "kind": "castle"},
        {"name": "tower", "kind": "tower"},
        {"name": "groups", "kind": "groups", "sizes": [1, 1]},
        {"name": "ends", "kind": "straight", "faces": [1, 6], "value": 7},
        {"name": "run", "kind": "run", "length": 2, "score": "sum", "servida": 9},
        {"name": "chance", "kind": "chance", "label": "Any"},
        {"name": "yatzy", "kind": "yatzy", "value": 50, "joker_value": 3, "requires_key": False},
    ],
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-10, 10)
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


def _paths(v, at=()):
    """Every place in a JSON value (a key of an object, an item of a list)."""
    yield at
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, (*at, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _paths(x, (*at, i))


TINY_PATHS = [p for p in _paths(TINY) if p]


@settings(max_examples=100, derandomize=True, deadline=None)
@given(where=st.sampled_from(TINY_PATHS), value=json_values)
def test_a_rule_set_with_any_value_anywhere_compiles_or_is_a_user_error(where, value):
    import copy

    from harness.util.errors import UserError
    from harness.game.rules import compile_rules

    spec = copy.deepcopy(TINY)
    node = spec
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = value
    try:
        compile_rules(spec, source="tiny")
    except UserError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 400


# ---------------------------------------------------------------------------------------------
# 6. which rule files a record may name


SECRET = 'password = "hunter2"\n'  # a file that is no rule set: its keys must never be shown


def _naming(line: str, game, rules) -> str:
    d = json.loads(line)
    d["game"], d["rules"] = game, rules
    return json.dumps(d)


@pytest.fixture
def secret(tmp_path) -> Path:
    path = tmp_path / "private" / "secret.toml"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """Every file the harness reads as TOML (or as bytes) from here on."""
    import tomllib

    seen: list[str] = []
    load, read_bytes = tomllib.load, Path.read_bytes

    def spy_load(fh, **kw):  # a file handle: its name
        seen.append(str(Path(fh.name).resolve()))
        return load(fh, **kw)

    def spy_read_bytes(self):
        seen.append(str(self.resolve()))
        return read_bytes(self)

    monkeypatch.setattr(tomllib, "load", spy_load)
    monkeypatch.setattr(Path, "read_bytes", spy_read_bytes)  # rules.read_toml reads a file's bytes
    return seen


def test_a_record_naming_a_file_outside_the_allowed_directories_is_a_bad_game_and_it_is_not_opened(
    tmp_path, lines, secret, opened, capsys, monkeypatch
):
    monkeypatch.chdir(secret.parent)  # the current directory is not implied
    names = [
        str(secret),
        "secret.toml",
        "./secret.toml",
        "/etc/passwd",
        "../private/secret.toml",
        str(secret.parent / ".." / "private" / "secret.toml"),
    ]
    rows = [lines[0]] + [_naming(lines[1], 10 + i, {"name": n, "settings": {}}) for i, n in enumerate(names)]
    path = _write(tmp_path / "games.jsonl", rows)
    allowed = tmp_path / "rules"
    allowed.mkdir()
    for extra in ([], ["--rules-dir", str(allowed)]):
        for argv in _commands(path, tmp_path / "out"):
            code = main(argv + extra)
            cap = capsys.readouterr()
            assert code == (1 if argv[0] == "records" else 0), (argv, cap.err)
            assert "password" not in cap.out + cap.err and "hunter2" not in cap.out + cap.err
            if argv[0] in ("records", "analyse", "fit"):
                bad = [x for x in cap.err.splitlines() if "game 1" in x]
                # (a relative name is also looked for inside the allowed directory: not found there)
                assert len(bad) == len(names) and all(
                    "outside the rules directories allowed" in x
                    or "not found: " in x
                    and "in the rules directories" in x
                    for x in bad
                )
    assert str(secret) not in opened and "/etc/passwd" not in opened


def test_rules_dir_allows_the_rule_files_inside_it_and_nothing_outside(tmp_path, lines, secret, opened, monkeypatch):
    import os

    rules = tmp_path / "rules"
    (rules / "sub").mkdir(parents=True)
    (rules / "sub" / "house.toml").write_text(
        'extends = "scandinavian"\nname = "house"\n[settings]\nupper_bonus_value = 50\n'
    )
    os.symlink(secret, rules / "link.toml")  # a link out of the directory
    monkeypatch.chdir(tmp_path)
    ok = [
        str(rules / "sub" / "house.toml"),
        "rules/sub/house.toml",
        "sub/house.toml",
        str(rules / "sub" / ".." / "sub" / "house.toml"),
    ]
    refused = {
        "link.toml": "rule set file not found",  # it leads outside: as if it were not there
        str(rules / ".." / "private" / "secret.toml"): "outside the rules directories allowed",
        "sub/none.toml": "rule set file not found",
    }
    rows = [_naming(lines[0], i, {"name": n, "settings": {}}) for i, n in enumerate([*ok, *refused])]
    res = read_records(_write(tmp_path / "g.jsonl", rows), rules_dirs=[rules])
    assert [g.game for g in res.games] == list(range(len(ok)))
    assert {r.name for r in res.rules} == {"house"}
    assert len(res.errors) == len(refused) and all(w in m.message for w, m in zip(refused.values(), res.errors))
    assert str(secret) not in opened
    with pytest.raises(Exception, match="rules directory .*: not a directory"):
        read_records(tmp_path / "g.jsonl", rules_dirs=[tmp_path / "nope"])


def test_a_record_may_carry_its_rule_set_inline(tmp_path, lines, capsys):
    import tomllib

    from harness.game.rules import rules_dir

    spec = tomllib.loads((rules_dir() / "scandinavian.toml").read_text())
    inline = dict(spec, name="kitchen")
    house = {"name": "house", "extends": "scandinavian", "settings": {"upper_bonus_value": 50}}
    rows = [
        _naming(lines[0], 0, inline),
        _naming(lines[1], 1, house),
        _naming(lines[2], 2, {"name": "x", "extends": "/etc/passwd"}),
        _naming(lines[2], 3, {"name": "x", "_source": "/etc/passwd", "boxes": []}),
        _naming(lines[2], 4, dict(spec, name="kitchen", dice=9)),
    ]
    path = _write(tmp_path / "inline.jsonl", rows)
    res = read_records(path)
    assert [g.game for g in res.games] == [0, 1] and [r.name for r in res.rules] == ["kitchen", "house"]
    assert res.games[0].rules == "kitchen" and res.games[0].rules_spec == inline and res.games[0].settings == {}
    assert GameRecord.from_json(res.games[0].to_json()) == res.games[0]
    assert json.loads(res.games[0].to_json())["rules"] == inline
    msgs = [b.message.split(": ", 1)[1] for b in res.errors]
    assert msgs[0].startswith("game 2: rules x (inline): extends: rule file '/etc/passwd' is outside")
    assert msgs[1].startswith('game 3: rules: unknown key "_source"')
    assert msgs[2] == "game 4: rules kitchen (inline): dice must be 1..8, got 9"
    assert main(["analyse", str(path), "--no-plots", "--out", str(tmp_path / "a"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["games"] == 2 and [r["rules"] for r in d["rules"]] == ["kitchen", "house"]
    assert d["rules"][0]["start_value"] == pytest.approx(d["rules"][1]["start_value"])  # the same rules


def test_the_readmes_inline_rule_set_reads(tmp_path, lines):
    import re

    section = (Path(__file__).resolve().parent.parent / "docs" / "records.md").read_text(encoding="utf-8")
    shown = re.search(r'```json\n("rules": .*?)\n```', section, re.S).group(1)
    rules = json.loads("{" + shown + "}")["rules"]
    res = read_records(_write(tmp_path / "g.jsonl", [_naming(lines[0], 0, rules)]), validate=False)  # bonus 100
    assert res.errors == [] and res.rules[0].name == "kitchen" and res.rules[0].bonus_value == 100
    assert "--rules-dir DIR" in section and "--max-line-bytes" in section


def test_a_run_directorys_own_records_keep_their_rule_file(tmp_path, lines, capsys):
    from harness.records.record import write_records_parquet
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    house = tmp_path / "elsewhere" / "house.toml"
    house.parent.mkdir()
    house.write_text('extends = "scandinavian"\nname = "house"\n[settings]\nupper_bonus_value = 50\n')
    out = tmp_path / "run"
    run(
        RunConfig(rules=str(house), seats=("greedy", "timeout"), games=3, seed=4, workers=1, record=True),
        out,
        quiet=True,
    )
    res = read_records(out)
    assert len(res.games) == 3 and res.errors == [] and res.games[0].rules == str(house.resolve())
    for argv in _commands(out, tmp_path / "a"):
        assert main(argv) == 0, (argv, capsys.readouterr().err)
    capsys.readouterr()
    # the same records in a file of their own name the rule file: allowed only with --rules-dir
    pq = write_records_parquet(tmp_path / "g.parquet", list(res.games))
    assert main(["records", str(pq)]) == 2 and "outside the rules directories allowed" in capsys.readouterr().err
    assert main(["records", str(pq), "--rules-dir", str(house.parent)]) == 0


# ---------------------------------------------------------------------------------------------
# 7. a line over the size limit is a bad game, read in bounded pieces


def test_a_line_over_the_limit_is_a_bad_game_and_is_never_held_whole(tmp_path, lines):
    import tracemalloc

    path = tmp_path / "long.jsonl"
    with path.open("wb") as fh:
        fh.write(lines[0].encode() + b"\n")
        fh.write(b'{"game": 7, "meta": "' + b"x" * (24 << 20) + b'"}\n')  # 24 MiB on one line
        fh.write(lines[1].encode() + b"\n")
    tracemalloc.start()
    try:
        res = read_records(path, max_line_bytes=1 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [g.game for g in res.games] == [0, 1]
    assert [b.message for b in res.errors] == [
        f"{path} line 2: a line of {(24 << 20) + 23:,} bytes, over the limit of 1,048,576 (--max-line-bytes); not read"
    ]
    assert peak < 4 << 20, peak


def test_max_line_bytes_on_the_command_line(tmp_path, lines, capsys):
    from harness.commands import options
    from harness.records.record import MAX_LINE_BYTES

    assert options.MAX_LINE_BYTES == MAX_LINE_BYTES  # the --help default is the library's
    n = max(len(x) for x in lines[:2])
    path = _write(tmp_path / "g.jsonl", [lines[0], lines[1], lines[2] + " " * 4096])
    assert main(["records", str(path), "--max-line-bytes", str(n)]) == 1
    cap = capsys.readouterr()
    assert "line 3: a line of" in cap.err and cap.out == f"{path}: 2 games read, 1 bad game skipped\n"
    assert main(["records", str(path)]) == 0
    capsys.readouterr()
    assert main(["records", str(path), "--max-line-bytes", "0"]) == 2


# ---------------------------------------------------------------------------------------------
# 12. a message about a value from a file names the file, the entry and the key (no flag the
# user never typed), and nothing is printed before the input is known to be good


LEVELS = 'strategy = "solver"\nparam = "temperature"\nlo = 0.0\nhi = 5.0\ngames = 100\n'


@pytest.mark.parametrize(
    "text, message",
    [
        (
            LEVELS + 'against = "solver"\n[[level]]\nname = "hard"\ntarget_win_rate = 1.5\n',
            "level 'hard': target_win_rate = 1.5 must be in (0, 1)",
        ),
        (
            LEVELS.replace("lo = 0.0", "lo = 6.0") + '[[level]]\nname = "a"\ntarget_mean = 200\n',
            "lo = 6, hi = 5: need lo < hi",
        ),
        (
            LEVELS.replace("games = 100", "games = 1") + '[[level]]\nname = "a"\ntarget_mean = 200\n',
            "games = 1 must be at least 2",
        ),
        (
            LEVELS + 'settings = { bonus = 1 }\n[[level]]\nname = "a"\ntarget_mean = 200\n',
            "settings: unknown setting 'bonus'",
        ),
        (
            LEVELS
            + 'settings = { include_pairs = false }\nrules = "standard"\n[[level]]\nname = "a"\ntarget_mean = 200\n',
            "settings.include_pairs: does not apply to rule set 'standard'",
        ),
    ],
    ids=["rate", "bracket", "games", "setting", "not-applying"],
)
def test_a_levels_file_mistake_names_the_file_entry_and_key_and_nothing_is_printed_first(
    tmp_path, capsys, text, message
):
    path = tmp_path / "levels.toml"
    path.write_text(text)
    assert main(["calibrate", "--levels", str(path), "--out", str(tmp_path / "out")]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.startswith(f"yatzy-harness: error: {path}: {message}") and cap.err.count("\n") == 1
    assert "--" not in cap.err.split("error: ", 1)[1] and not (tmp_path / "out").exists()


def test_a_levels_problem_found_later_is_told_before_the_first_line_too(tmp_path, capsys):
    path = tmp_path / "levels.toml"
    path.write_text(LEVELS + '[[level]]\nname = "casual"\ntarget_win_rate = 0.4\n')  # no reference player
    assert main(["calibrate", "--levels", str(path), "--out", str(tmp_path / "out")]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and "level 'casual' aims at a win rate: give --against REF" in cap.err


def test_a_records_setting_is_named_as_the_record_gives_it(tmp_path, lines):
    rows = [
        _naming(lines[0], 10, {"name": "scandinavian", "settings": {"nonsense": 1}}),
        _naming(lines[0], 11, {"name": "generala", "settings": {"include_pairs": False}}),
        _naming(lines[0], 12, {"name": "scandinavian", "settings": {"columns": 9}}),
        lines[2],
    ]
    res = read_records(_write(tmp_path / "g.jsonl", rows))
    msgs = [b.message.split(": ", 1)[1] for b in res.errors]
    assert msgs[0].startswith("game 10: rules scandinavian: rules.settings: unknown setting 'nonsense' (settings: ")
    assert msgs[1].startswith("game 11: rules generala: rules.settings.include_pairs: does not apply")
    assert msgs[2] == "game 12: rules scandinavian: rules.settings: setting columns=9 is out of range 1..6"
    assert not any("--set" in m for m in msgs)


def test_a_run_configs_setting_is_named_as_the_file_gives_it(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text('seats = ["greedy"]\ngames = 10\nsettings = { columns = 9 }\n')
    assert main(["run", str(path), "--out", str(tmp_path / "r")]) == 2
    assert (
        capsys.readouterr().err == f"yatzy-harness: error: {path}: settings: setting columns=9 is out of range 1..6\n"
    )
    assert main(["run", str(path), "--set", "columns=8", "--out", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err == "yatzy-harness: error: --set: setting columns=8 is out of range 1..6\n"


# ---------------------------------------------------------------------------------------------
# 15. counts in words, and a file's booleans are booleans


def test_one_bad_game_is_one_bad_game(tmp_path, lines, capsys):
    path = _write(tmp_path / "g.jsonl", [lines[0], "{"])
    assert main(["fit", str(path), "--model", "solver:temperature"]) == 0
    assert f"Source: {path} (1 game, 1 bad game skipped); rules scandinavian" in capsys.readouterr().out
    assert main(["analyse", str(path), "--no-plots", "--out", str(tmp_path / "a")]) == 0
    assert f"Source: {path} (1 game analysed, 1 skipped)" in capsys.readouterr().out


@pytest.mark.parametrize("what", ["rules", "run config", "levels", "inline"])
def test_a_boolean_written_as_a_string_in_a_file_is_refused_naming_file_and_key(tmp_path, capsys, lines, what):
    from harness.players.levels import load_levels
    from harness.util.errors import UserError
    from harness.game.rules import load_rules
    from harness.play.runconfig import RunConfig

    path = tmp_path / "f.toml"
    said = "saved_rolls = 'yes': must be true or false (a boolean, unquoted: saved_rolls = true), not a string"
    if what == "rules":
        path.write_text('extends = "maxi"\n[settings]\nsaved_rolls = "yes"\n')
        load, at = load_rules, f"{path} [settings] {said}"
    elif what == "run config":
        path.write_text('seats = ["greedy"]\nsettings = { saved_rolls = "yes" }\n')
        load, at = RunConfig.from_toml, f"{path}: settings.{said}"
    elif what == "levels":
        path.write_text(LEVELS + 'settings = { saved_rolls = "yes" }\n[[level]]\nname = "a"\ntarget_mean = 200\n')
        load, at = load_levels, f"{path}: settings.{said}"
    else:
        rules = {"name": "kitchen", "extends": "scandinavian", "settings": {"saved_rolls": "yes"}}
        res = read_records(_write(tmp_path / "g.jsonl", [lines[0], _naming(lines[1], 5, rules)]))
        assert res.errors[0].message.endswith(f"game 5: rules kitchen (inline): [settings] {said}")
        return
    with pytest.raises(UserError) as exc:
        load(str(path))
    assert str(exc.value) == at
    # on the command line a setting is text: --set saved_rolls=true still works
    assert load_rules("maxi", ["saved_rolls=true"]).saved_rolls
    assert load_rules("maxi", {"saved_rolls": True}).saved_rolls


# ---------------------------------------------------------------------------------------------
# whatever a line holds: valid records mutated at random, every line a game or one bad game

MUTATIONS = ("truncate", "nest", "flip", "duplicate", "reorder", "inflate", "pad", "bom", "cr", "blank")
#: what an inflated number becomes
BIG = ("9" * 20, "9" * 4301, "1" + "0" * 5000, "1e999", "-0", "0.5", "NaN", "-99999999999999999999")
_NUMBER = re.compile(rb"-?\d+")


def _mutate(lines: list[bytes], ops: list[tuple[str, int, int]]) -> list[bytes]:
    out = list(lines)
    for op, a, b in ops:
        i = a % len(out)
        line = out[i]
        if op == "truncate":
            out[i] = line[: b % (len(line) + 1)]
        elif op == "nest":
            depth = (1, 5, 40, 1000, 5000)[b % 5]
            cut = a % (len(line) + 1)
            out[i] = line[:cut] + b"[" * depth + line[cut:] + b"]" * depth
        elif op == "flip" and line:
            j = b % len(line)
            out[i] = line[:j] + bytes([line[j] ^ (1 + a % 255)]) + line[j + 1 :]
        elif op == "duplicate":
            out.insert(b % (len(out) + 1), line)
        elif op == "reorder":
            j = b % len(out)
            out[i], out[j] = out[j], out[i]
        elif op == "inflate":
            nums = list(_NUMBER.finditer(line))
            if nums:
                m = nums[b % len(nums)]
                out[i] = line[: m.start()] + BIG[a % len(BIG)].encode() + line[m.end() :]
        elif op == "pad":
            out[i] = line + b" " * (1 + b % 300)
        elif op == "bom":
            out[i] = b"\xef\xbb\xbf" + line
        elif op == "cr":
            out[i] = line + b"\r"
        elif op == "blank":
            out.insert(b % (len(out) + 1), b" \t" if a % 2 else b"")
    return out


def _counted(data: bytes, limit: int) -> set[int]:
    """The line numbers of ``data`` that a reader must account for: a line over ``limit`` bytes,
    or one holding anything but JSON whitespace (a byte-order mark at the start aside)."""
    out = set()
    for n, content in enumerate(data.split(b"\n")[:-1], 1):
        text = content[3:] if n == 1 and content.startswith(b"\xef\xbb\xbf") else content
        if len(content) > limit or text.strip(b" \t\r\n"):
            out.add(n)
    return out


def _line_of(message: str, path: Path) -> int:
    head = f"{path} line "
    assert message.startswith(head), message
    return int(message[len(head) :].split(":", 1)[0])


mutations = st.lists(
    st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 2**20), st.integers(0, 2**20)), min_size=1, max_size=4
)


@pytest.fixture(scope="module")
def fuzz_file(tmp_path_factory, lines):
    """(path, limit, write(ops) -> expected line numbers): one file rewritten for every example."""
    path = tmp_path_factory.mktemp("fuzz") / "games.jsonl"
    limit = max(len(x) for x in lines) + 100  # a padded line goes over it

    def write(ops):
        data = b"\n".join(_mutate([x.encode() for x in lines], ops)) + b"\n"
        path.write_bytes(data)
        return _counted(data, limit)

    return path, limit, write


@settings(max_examples=80, derandomize=True, deadline=None)
@given(ops=mutations)
def test_every_line_of_a_mutated_file_is_a_game_or_one_bad_game(fuzz_file, ops):
    import contextlib
    import io

    from harness.util.errors import UserError
    from harness.records.record import NoUsableGame

    path, limit, write = fuzz_file
    expected = write(ops)
    try:
        res = read_records(path, max_line_bytes=limit)
    except NoUsableGame as exc:
        assert sorted(_line_of(b.message, path) for b in exc.bad) == sorted(expected)
    except UserError as exc:
        assert not expected and "no game records" in str(exc)
    else:
        used = [int(p.split()[1]) for p in res.places]
        bad = [_line_of(b.message, path) for b in res.errors]
        assert sorted(used + bad) == sorted(expected)  # each line once: used, or bad for one reason
        assert all("\n" not in b.message for b in res.errors)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["records", str(path), "--max-line-bytes", str(limit)])
    assert code in (0, 1, 2) and "Traceback" not in err.getvalue()
    if code != 2:
        m = re.fullmatch(rf"{re.escape(str(path))}: (\d+) games? read, (\d+) bad games? skipped\n", out.getvalue())
        assert m and int(m[1]) + int(m[2]) == len(expected)


@settings(max_examples=8, derandomize=True, deadline=None)
@given(ops=mutations)
def test_analyse_and_fit_of_a_mutated_file_account_for_every_line(fuzz_file, ops):
    from harness.util.errors import UserError
    from harness.players.fit import fit_records
    from harness.decisions.skill import analyse_records

    path, limit, write = fuzz_file
    expected = write(ops)
    try:
        res = read_records(path, max_line_bytes=limit)
    except UserError:
        return  # nothing usable: the test above
    try:
        rep = analyse_records(res)
    except UserError:
        rep = None
    if rep is not None:
        assert rep.games + len(rep.bad) == len(expected)
    try:
        fit = fit_records(res, "solver:temperature")
    except UserError:  # e.g. a flipped digit made a second rule set: the fit takes one
        return
    assert fit.games + len(fit.bad) == len(expected)


@pytest.mark.parametrize(
    "name,why",
    [
        ("\x1b[2J\x1b[Hmallory", "holds the control character U+001B"),
        ("eve\nseat 1 (alice) 300", "holds the control character U+000A"),
        ("bob\u202eecila", "holds the control character U+202E"),
        ("x" * 201, "is 201 characters long (at most 200)"),
    ],
)
def test_a_seat_name_that_would_print_raw_control_characters_is_a_bad_game(tmp_path, lines, capsys, name, why):
    """A name is printed in every table of its player: a terminal escape, a line break or a
    right-to-left override in it would draw on the user's terminal or disguise another line."""
    bad = json.loads(lines[1])
    bad["seats"][0] = {"name": name}
    path = _write(tmp_path / "g.jsonl", [lines[0], json.dumps(bad), lines[2]])
    assert main(["records", str(path)]) == 1
    captured = capsys.readouterr()
    assert f"{path} line 2: game 1: seat 0 name {why}" in captured.err
    assert "\x1b" not in captured.out + captured.err and "\u202e" not in captured.out + captured.err
    assert "2 games read, 1 bad game skipped" in captured.out
    ok = json.loads(lines[1])
    ok["seats"][0] = {"name": "Zoë O'Brien-Łukasz 李"}  # any printable name is a name
    assert main(["records", str(_write(tmp_path / "ok.jsonl", [json.dumps(ok)])), "--text"]) == 0
    assert "Zoë O'Brien-Łukasz 李" in capsys.readouterr().out
