"""Generate the Python message code from ``proto/`` (never edit the output by hand).

Run ``python -m bullring.contract.protogen``; installing the package runs it too (setup.py).
Output: ``bullring/contract/generated/bullring/v2/referee_pb2.py`` (+ ``.pyi``) and the descriptor
set
with the comments, ``bullring/contract/generated/contract.binpb``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTO_DIR = ROOT / "proto"
OUT_DIR = ROOT / "bullring" / "contract" / "generated"

DESCRIPTORS = "contract.binpb"
"""The descriptor set of ``proto/`` with its comments (source info), written beside the code:
the HTTP API's OpenAPI document takes every field's description from it."""

_RUNTIME_CHECK = re.compile(
    r"ValidateProtobufRuntimeVersion\(\s*_runtime_version\.Domain\.PUBLIC,"
    r"\s*(\d+),\s*(\d+),\s*(\d+),")


def generate(proto_dir: Path = PROTO_DIR, out_dir: Path = OUT_DIR) -> list[Path]:
    """Compile every ``.proto`` under ``proto_dir`` into ``out_dir``; return the outputs."""
    from grpc_tools import protoc  # imported here: only the build needs grpcio-tools

    protos = sorted(proto_dir.rglob("*.proto"))
    out_dir.mkdir(parents=True, exist_ok=True)
    args = ["protoc", f"-I{proto_dir}", f"--python_out={out_dir}", f"--pyi_out={out_dir}",
            f"--descriptor_set_out={out_dir / DESCRIPTORS}", "--include_source_info",
            *(str(p) for p in protos)]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed on {', '.join(map(str, protos))}")
    for folder in {out_dir, *(p.parent for p in out_dir.rglob("*_pb2.py"))}:
        marker = folder / "__init__.py"
        while folder != out_dir.parent and not marker.exists():
            marker.write_text('"""Generated from proto/ by bullring.contract.protogen."""\n')
            folder = folder.parent
            marker = folder / "__init__.py"
    return sorted(out_dir.rglob("*_pb2.py"))


def runtime_floor(outputs: Iterable[Path]) -> tuple[int, int, int]:
    """The oldest protobuf runtime the generated code imports under, as (major, minor, patch).

    Each ``_pb2.py`` calls ``ValidateProtobufRuntimeVersion`` with the version of the protoc
    that wrote it and raises ``VersionError`` on an older runtime, so the floor is the
    highest version named there. That protoc is the one bundled with grpcio-tools, which is
    why pyproject.toml bounds grpcio-tools wherever the code is generated.
    """
    found = []
    for path in outputs:
        match = _RUNTIME_CHECK.search(path.read_text(encoding="utf-8"))
        if match is None:
            raise ValueError(f"no ValidateProtobufRuntimeVersion call in {path}")
        major, minor, patch = (int(x) for x in match.groups())
        found.append((major, minor, patch))
    if not found:
        raise ValueError("no generated _pb2.py files to read the protobuf floor from")
    return max(found)


if __name__ == "__main__":
    for path in generate():
        print(f"generated {path.relative_to(ROOT)}")
    sys.exit(0)
