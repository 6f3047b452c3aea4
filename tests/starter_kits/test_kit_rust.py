"""The Rust starter kit (client_sdk/rust): copied out of the repository with the contract,
built by its README's command from Debian's crates alone (no network), and run on a live
server's ladder over HTTP."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from tests.kits import (
    DEBIAN_FIRST,
    ROOT,
    Kit,
    KitRig,
    check_a_throw_falls_to_the_default,
    check_ladder_play,
    check_replaced,
    kit_rig,
)

RUST = Kit("rust", ("cargo",))

THROWING_BOT = """
use bullring::contract::{DecisionRequest, SixNimmtObservation};
use bullring::Bot;

struct ThrowingBot(u32);

impl Bot for ThrowingBot {
    fn play_card(&mut self, seen: &SixNimmtObservation, _d: &DecisionRequest) -> i32 {
        self.0 += 1;
        if self.0 == 3 {
            panic!("thrown on purpose at the third card");
        }
        seen.hand[0]
    }
}

fn main() {
    bullring::run(ThrowingBot(0));
}
"""


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KitRig]:
    """The kit built in a folder of its own, and a ladder server."""
    yield from kit_rig(RUST, tmp_path_factory.mktemp("rust"))


def test_readme_installs_what_ci_installs() -> None:
    """Every Debian package the README's install command names is installed by .ci/run, and
    cargo takes its crates from Debian's registry only."""
    RUST.check_install_line()
    config = (ROOT / "client_sdk" / "rust" / ".cargo" / "config.toml").read_text()
    assert 'directory = "/usr/share/cargo/registry"' in config and "offline = true" in config


def test_the_starter_bot_plays_both_ladders(rig: KitRig) -> None:
    """The Rust starter bot plays two rated matches of each game on the ladder over HTTP
    by the README's run command and stops on SIGTERM with status 0 (tests/kits.py says what
    is checked)."""
    check_ladder_play(rig)


def test_a_panicking_bot_falls_to_the_default_and_plays_on(rig: KitRig) -> None:
    """A bot whose play_card panics once is logged with its backtrace, that decision gets the
    default action, and the bot plays the rest of its match."""
    (rig.folder / "examples").mkdir(exist_ok=True)
    (rig.folder / "examples" / "throwing.rs").write_text(THROWING_BOT, encoding="utf-8")
    subprocess.run(["cargo", "build", "--release", "--example", "throwing"], cwd=rig.folder,
                   check=True, capture_output=True, env=DEBIAN_FIRST)
    name = "rustthrows"
    bot = RUST.start(rig.folder, name, rig.server, rig.server.add_bot(name), "six_nimmt",
                     "--matches", "1",
                     command="./target/release/examples/throwing --server http://HOST:PORT "
                             "--token TOKEN --ladder six_nimmt")
    try:
        check_a_throw_falls_to_the_default(rig, name, bot, "thrown on purpose at the third card")
        assert "stack backtrace:" in bot.err.text()
    finally:
        bot.stop()


def test_a_second_process_on_the_token_replaces_the_first(rig: KitRig) -> None:
    """The runner stops for good (exit 5) when another process takes its token's place."""
    check_replaced(rig)
