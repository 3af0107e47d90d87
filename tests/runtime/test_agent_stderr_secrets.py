"""What an outside agent prints on its standard error is kept redacted: keys of well-known shapes it holds itself
(never registered with p2w-rt), also when one straddles the cut of the kept tail; ordinary text and hashes stay
(docs/design/errors-and-secrets.md, docs/design/exec.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.exec._agent_process import STDERR_TAIL, run_agent
from p2w_runtime.redaction import MASK, redact_agent_text

KEYS = {
    "openai": "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH_ijkl-mnop",
    "legacy openai": "sk-4fQz9XbLm2Rt7VwYc1NpKs8DgHj3AeUo6iZx0",
    "anthropic": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-AbCdEf",
    "google": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "github": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github fine-grained": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
    "query token": "tok3n-VALUE-42",
}
SAID = [
    f"openai key {KEYS['openai']} loaded",
    f"retrying with {KEYS['legacy openai']}",
    f"Authorization: Bearer {KEYS['anthropic']}",
    f"google maps key={KEYS['google']} ok",
    f"cloning with {KEYS['github']} and {KEYS['github fine-grained']}",
    f"aws id {KEYS['aws']}",
    f"curl -H 'X-Auth: Bearer {KEYS['bearer']}'",
    f"GET https://api.example/v1/items?page=2&token={KEYS['query token']}&sort=asc",
]
ORDINARY = (
    "The sk-learn baseline and a sk-based risk-assessment-of-hyphenated-compound-words both ran; event hash "
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, blob sha256 "
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855, task Lena_Fischer_A1, the bearer of bad news, "
    "https://shop.example/search?q=penne&page=2"
)


def test_keys_of_well_known_shapes_are_masked_and_ordinary_text_survives() -> None:
    for line in SAID:
        said = redact_agent_text(line)
        assert MASK in said and not any(key in said for key in KEYS.values()), said
    assert redact_agent_text("GET https://x.example/a?page=2&token=abc&sort=asc") == (
        f"GET https://x.example/a?page=2&token={MASK}&sort=asc"
    )
    assert redact_agent_text(ORDINARY) == ORDINARY


async def test_a_key_the_agent_prints_is_masked_in_its_stderr_tail_even_across_the_cut(tmp_path: Path) -> None:
    key = KEYS["openai"]
    # the last line alone is longer than the tail kept, and the cut falls inside the key
    last = f"debug: calling the model with {key} now " + "x" * (STDERR_TAIL - len(key) // 2)
    script = "import sys\n" + "".join(f"print({line!r}, file=sys.stderr)\n" for line in [*SAID, last]) + "sys.exit(3)\n"
    agent = tmp_path / "agent.py"
    agent.write_text(script)
    ended = await run_agent([sys.executable, str(agent)], {}, tmp_path / "answer.json", cwd=tmp_path, timeout_s=60)
    assert ended.status == 3
    assert len(ended.stderr_tail) <= STDERR_TAIL and ended.stderr_tail.rstrip().endswith("x")
    assert f"the model with {MASK} now " in ended.stderr_tail  # the masked key, not the key's tail
    assert all(key[i : i + 8] not in ended.stderr_tail for i in range(len(key) - 7))
    assert f"with {MASK} now " in ended.last_error_line()


async def test_every_key_line_the_agent_prints_last_is_masked_in_its_tail(tmp_path: Path) -> None:
    script = "import sys\n" + "".join(f"print({line!r}, file=sys.stderr)\n" for line in SAID) + "sys.exit(1)\n"
    agent = tmp_path / "agent.py"
    agent.write_text(script)
    ended = await run_agent([sys.executable, str(agent)], {}, tmp_path / "answer.json", cwd=tmp_path, timeout_s=60)
    assert ended.stderr_tail.splitlines() == [redact_agent_text(line) for line in SAID]
    assert not any(key in ended.how_it_ended() for key in KEYS.values())


def test_a_script_given_by_its_path_but_not_executable_is_said_to_be_so(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("print('hi')\n")
    agent.chmod(0o644)
    db = tmp_path / "p2w.db"
    endpoint = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--task", "Lena_Fischer_A1"]
    done = CliRunner().invoke(main, ["--db", str(db), "record", "--exec", str(agent), *endpoint])
    assert done.exit_code != 0
    assert f"--exec: '{agent}' is not executable (chmod +x it, or run it through its interpreter" in done.output
    assert "not a program found here" not in done.output and not db.exists()
    missing = CliRunner().invoke(main, ["--db", str(db), "record", "--exec", str(tmp_path / "gone.py"), *endpoint])
    assert missing.exit_code != 0 and "is not a program found here" in missing.output
