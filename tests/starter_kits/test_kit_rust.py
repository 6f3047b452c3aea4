"""The Rust starter kit (client_sdk/rust): copied out of the repository with the contract,
built by its README's command from Debian's crates alone (no network), and run on a live
server's ladder over HTTP."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.kits import DEBIAN_FIRST, ROOT, Kit, KitRig, KitTests
from tests.ladder_helpers import LadderBot

RUST = Kit("rust", ("cargo",),
           frozenset({"lowest card", "shortest row", "out of chips", "the pot pays for it",
                      "too dear for the pot"}))

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

    fn comment(&mut self) -> String {
        "x".repeat(201)
    }
}

fn main() {
    bullring::run(ThrowingBot(0));
}
"""


class TestRustKit(KitTests):
    """The Rust kit, over HTTP; its throwing bot's play_card panics, and the backtrace is
    logged."""

    KIT = RUST
    THROWN_AT = "stack backtrace:"

    def test_readme_installs_what_ci_installs(self) -> None:
        """Every Debian package the README's install command names is installed by .ci/run,
        and cargo takes its crates from Debian's registry only."""
        RUST.check_install_line()
        config = (ROOT / "client_sdk" / "rust" / ".cargo" / "config.toml").read_text()
        assert 'directory = "/usr/share/cargo/registry"' in config and "offline = true" in config

    def start_throwing(self, rig: KitRig, tmp_path: Path, name: str) -> LadderBot:
        """The throwing bot built as one of the kit's examples, run like the starter bot."""
        (rig.folder / "examples").mkdir(exist_ok=True)
        (rig.folder / "examples" / "throwing.rs").write_text(THROWING_BOT, encoding="utf-8")
        subprocess.run(["cargo", "build", "--release", "--example", "throwing"],
                       cwd=rig.folder, check=True, capture_output=True, env=DEBIAN_FIRST)
        return RUST.start(rig.folder, name, rig.server, rig.server.add_bot(name), "six_nimmt",
                          "--matches", "1",
                          command="./target/release/examples/throwing --server "
                                  "http://HOST:PORT --token TOKEN --ladder six_nimmt")
