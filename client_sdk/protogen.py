"""Generate the Python message code from ``proto/`` (never edit the output by hand).

Run ``python -m client_sdk.protogen``; installing the package runs it too (setup.py).
Output: ``client_sdk/generated/bullring/v1/referee_pb2.py`` (+ ``.pyi``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "proto"
OUT_DIR = ROOT / "client_sdk" / "generated"


def generate(proto_dir: Path = PROTO_DIR, out_dir: Path = OUT_DIR) -> list[Path]:
    """Compile every ``.proto`` under ``proto_dir`` into ``out_dir``; return the outputs."""
    from grpc_tools import protoc  # imported here: only the build needs grpcio-tools

    protos = sorted(proto_dir.rglob("*.proto"))
    out_dir.mkdir(parents=True, exist_ok=True)
    args = ["protoc", f"-I{proto_dir}", f"--python_out={out_dir}", f"--pyi_out={out_dir}",
            *(str(p) for p in protos)]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed on {', '.join(map(str, protos))}")
    for folder in {out_dir, *(p.parent for p in out_dir.rglob("*_pb2.py"))}:
        marker = folder / "__init__.py"
        while folder != out_dir.parent and not marker.exists():
            marker.write_text('"""Generated from proto/ by client_sdk.protogen."""\n')
            folder = folder.parent
            marker = folder / "__init__.py"
    return sorted(out_dir.rglob("*_pb2.py"))


if __name__ == "__main__":
    for path in generate():
        print(f"generated {path.relative_to(ROOT)}")
    sys.exit(0)
