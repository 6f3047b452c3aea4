"""The proto3 JSON mapping of the generated messages (``bullring_messages.py``): names as in
the contract (lowerCamelCase accepted too), enums by name, 64-bit integers as text, unknown
fields ignored so that a newer server's messages still read."""

from __future__ import annotations

import sys
from typing import Any, ClassVar, TypeVar

INTS = {"int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64",
        "sfixed32", "sfixed64"}
PLAIN = {"string", "bytes", "bool"}
FLOATS = {"double", "float"}

M = TypeVar("M", bound="Message")


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(word.title() for word in rest)


class Message:
    """The base of every generated message."""

    _FIELDS: ClassVar[dict[str, tuple[str, str]]] = {}
    """Each field's contract type and shape: single, optional, list or map."""

    @classmethod
    def from_json(cls: type[M], data: dict[str, Any]) -> M:
        """The message that the JSON object ``data`` holds."""
        values: dict[str, Any] = {}
        for name, (type_name, shape) in cls._FIELDS.items():
            raw = data.get(name, data.get(_camel(name)))
            if raw is None:
                continue
            if shape == "list":
                values[name] = [_read(cls, type_name, item) for item in raw]
            elif shape == "map":
                values[name] = {key: _read(cls, type_name, item) for key, item in raw.items()}
            else:
                values[name] = _read(cls, type_name, raw)
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        """The message as a JSON object (fields left unset are left out)."""
        out: dict[str, Any] = {}
        for name, (_, shape) in self._FIELDS.items():
            value = getattr(self, name)
            if value is None:
                continue
            if shape == "list":
                out[name] = [_write(item) for item in value]
            elif shape == "map":
                out[name] = {key: _write(item) for key, item in value.items()}
            else:
                out[name] = _write(value)
        return out


def _read(owner: type[Message], type_name: str, raw: Any) -> Any:
    if type_name in INTS:
        return int(raw)
    if type_name in FLOATS:
        return float(raw)
    if type_name in PLAIN:
        return raw
    module = sys.modules[owner.__module__]
    enum = module.ENUMS.get(type_name)
    if enum is not None:
        return enum.get(raw, str(raw)) if isinstance(raw, int) else raw
    message: type[Message] = getattr(module, type_name)
    return message.from_json(raw)


def _write(value: Any) -> Any:
    return value.to_json() if isinstance(value, Message) else value
