"""Generate ``bullring_messages.py`` from the contract: ``python3 generate.py [PROTO_DIR]``.

Reads every ``.proto`` file of the contract (``proto/`` beside this file, else the
repository's ``proto/``) with a small proto3 reader written on Python's standard library, and
writes one dataclass per message and one set of names per enum, each able to read and write
the proto3 JSON mapping the HTTP API speaks. The output is made anew by every run: never edit
it by hand.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "bullring_messages.py"

SCALARS = {"string": "str", "bytes": "str", "bool": "bool", "double": "float", "float": "float",
           **{t: "int" for t in ("int32", "int64", "uint32", "uint64", "sint32", "sint64",
                                 "fixed32", "fixed64", "sfixed32", "sfixed64")}}
DEFAULTS = {"str": '""', "bool": "False", "float": "0.0", "int": "0"}
TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\]|\\.)*"|[A-Za-z_][\w.]*|-?\d+|\S', re.S)


@dataclass
class Field:
    """One field of a message."""

    name: str
    type: str
    repeated: bool = False
    map_value: str | None = None
    oneof: str | None = None
    optional: bool = False
    doc: str = ""


@dataclass
class Message:
    """One message: its fields in order."""

    name: str
    doc: str
    fields: list[Field] = field(default_factory=list)


@dataclass
class Enum:
    """One enum: its value names by number."""

    name: str
    doc: str
    values: dict[int, str] = field(default_factory=dict)


class Reader:
    """A proto3 file as tokens, with the comment lines just before each one."""

    def __init__(self, text: str, where: str) -> None:
        self.where = where
        self.tokens: list[tuple[str, str]] = []
        comments: list[str] = []
        for token in TOKEN.findall(text):
            if token.startswith("//"):
                comments.append(token[2:].strip())
            elif not token.startswith("/*"):
                self.tokens.append((token, " ".join(comments)))
                comments = []
        self.at = 0

    def next(self) -> tuple[str, str]:
        """The next token and the comment before it."""
        if self.at >= len(self.tokens):
            raise SyntaxError(f"{self.where}: the file ends too early")
        self.at += 1
        return self.tokens[self.at - 1]

    def expect(self, wanted: str) -> None:
        """Take the next token, which must be ``wanted``."""
        token, _ = self.next()
        if token != wanted:
            raise SyntaxError(f"{self.where}: expected {wanted!r}, found {token!r}")

    def skip_statement(self) -> None:
        """Skip to the end of a statement or a braced block."""
        depth = 0
        while True:
            token, _ = self.next()
            depth += token == "{"
            depth -= token == "}"
            if depth == 0 and token in (";", "}"):
                return


def read_enum(reader: Reader, doc: str) -> Enum:
    """``enum NAME { VALUE = N; ... }`` (after the keyword)."""
    name, _ = reader.next()
    found = Enum(name, doc)
    reader.expect("{")
    while (token := reader.next()[0]) != "}":
        if token in ("option", "reserved"):
            reader.skip_statement()
            continue
        reader.expect("=")
        found.values[int(reader.next()[0])] = token
        reader.skip_statement() if reader.next()[0] != ";" else None
    return found


def read_field(reader: Reader, first: str, doc: str, oneof: str | None) -> Field:
    """One field declaration whose first token is ``first``."""
    repeated = optional = False
    if first in ("repeated", "optional"):
        repeated, optional = first == "repeated", first == "optional"
        first = reader.next()[0]
    map_value = None
    if first == "map":
        reader.expect("<")
        reader.next()
        reader.expect(",")
        map_value = reader.next()[0]
        reader.expect(">")
    name, _ = reader.next()
    reader.expect("=")
    reader.next()
    if reader.next()[0] != ";":
        reader.skip_statement()  # field options
    return Field(name, first, repeated, map_value, oneof, optional, doc)


def read_message(reader: Reader, doc: str) -> tuple[Message, list[Enum]]:
    """``message NAME { ... }`` (after the keyword); nested enums are returned beside it."""
    name, _ = reader.next()
    message, enums = Message(name, doc), list[Enum]()
    reader.expect("{")
    while True:
        token, comment = reader.next()
        if token == "}":
            return message, enums
        if token == "enum":
            enums.append(read_enum(reader, comment))
        elif token in ("option", "reserved", "extensions"):
            reader.skip_statement()
        elif token == "message":
            raise SyntaxError(f"{reader.where}: nested message in {name}: not supported")
        elif token == "oneof":
            group, _ = reader.next()
            reader.expect("{")
            while (inner := reader.next())[0] != "}":
                message.fields.append(read_field(reader, inner[0], inner[1], group))
        else:
            message.fields.append(read_field(reader, token, comment, None))


def read(path: Path) -> tuple[list[Message], list[Enum]]:
    """Every message and enum of one .proto file."""
    reader = Reader(path.read_text(encoding="utf-8"), str(path))
    messages, enums = list[Message](), list[Enum]()
    while reader.at < len(reader.tokens):
        token, comment = reader.next()
        if token == "message":
            message, inner = read_message(reader, comment)
            messages.append(message)
            enums.extend(inner)
        elif token == "enum":
            enums.append(read_enum(reader, comment))
        else:
            reader.skip_statement()  # syntax, package, import, option, service
    return messages, enums


def annotation(f: Field, enums: dict[str, str]) -> tuple[str, str]:
    """The Python type of a field and its default value (``enums``: each enum's name for 0)."""
    base = f.type.rsplit(".", 1)[-1]
    scalar = SCALARS.get(base, "str" if base in enums else None)
    if f.map_value is not None:
        value = SCALARS.get(f.map_value, "str" if f.map_value in enums else f.map_value)
        return f"dict[str, {value}]", "field(default_factory=dict)"
    if f.repeated:
        return f"list[{scalar or base}]", "field(default_factory=list)"
    if scalar is None:
        if f.oneof or f.optional:
            return f"{base} | None", "None"
        return base, f"field(default_factory=lambda: {base}())"
    if f.oneof or f.optional:
        return f"{scalar} | None", "None"
    return scalar, DEFAULTS[scalar] if base not in enums else repr(enums[base])


def docstring(text: str, indent: str) -> str:
    """``text`` as a docstring line (quotes and backslashes escaped)."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'{indent}"""{text}"""'


def render(messages: list[Message], enums: list[Enum], sources: list[str]) -> str:
    """The text of bullring_messages.py."""
    names = {e.name: e.values.get(0, "") for e in enums}
    out = [f'"""Messages of the Bullring contract, generated from {", ".join(sources)} by',
           "generate.py: never edit by hand (run ``python3 generate.py`` again).", '"""', "",
           "from __future__ import annotations", "",
           "from dataclasses import dataclass, field", "",
           "from bullring_json import Message", "",
           "ENUMS: dict[str, dict[int, str]] = {"]
    out += [f"    {enum.name!r}: {enum.values!r}," for enum in enums]
    out += ["}", '"""Each enum\'s value names by number."""']
    for message in messages:
        out += ["", "", "@dataclass", f"class {message.name}(Message):",
                docstring(message.doc or message.name, "    "), ""]
        for f in message.fields:
            kind, default = annotation(f, names)
            out.append(f"    {f.name}: {kind} = {default}")
            if f.doc:
                out.append(docstring(f.doc, "    "))
        shapes = {f.name: (f.map_value or f.type.rsplit(".", 1)[-1],
                           "map" if f.map_value else "list" if f.repeated else
                           "optional" if f.oneof or f.optional else "single")
                  for f in message.fields}
        out.append(f"    _FIELDS = {shapes!r}")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    """Read the contract, write bullring_messages.py."""
    candidates = [Path(argv[0])] if argv else [HERE / "proto", HERE.parent.parent / "proto"]
    contract = next((c for c in candidates if c.is_dir()), None)
    if contract is None:
        print("generate.py: no contract found; copy the repository's proto/ folder here",
              file=sys.stderr)
        return 2
    messages: list[Message] = []
    enums: list[Enum] = []
    sources = []
    for path in sorted(contract.rglob("*.proto")):
        found_messages, found_enums = read(path)
        messages += found_messages
        enums += found_enums
        sources.append(path.relative_to(contract).as_posix())
    OUT.write_text(render(messages, enums, sources), encoding="utf-8")
    print(f"generated {OUT.name}: {len(messages)} messages, {len(enums)} enums")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
