"""JSON Schemas of the contract's messages, for the OpenAPI document: what the HTTP API sends
is the proto3 JSON mapping of ``proto/bullring/v2/referee.proto`` (proto_json.py), so its
schemas are made from the same descriptors, and each field's description is its comment in
the ``.proto`` (read from the descriptor set the build writes beside the generated code).

A field without presence (a number, a word, a list) is always written, so it is required; a
message field and a member of a ``oneof`` appear only when set. Enums are strings, by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

import bullring.contract.generated
from bullring.contract.protogen import DESCRIPTORS
from bullring.contract.wire import ContractError

REF = "#/components/schemas/"
"""Where named schemas live in the OpenAPI document."""

_INTEGER = {FieldDescriptor.TYPE_INT32: "int32", FieldDescriptor.TYPE_UINT32: "int32",
            FieldDescriptor.TYPE_SINT32: "int32", FieldDescriptor.TYPE_FIXED32: "int32",
            FieldDescriptor.TYPE_SFIXED32: "int32"}
"""32-bit integer types: JSON numbers. (64-bit ones would be strings; the contract has none
on the HTTP side.)"""


@cache
def comments() -> dict[str, str]:
    """The leading comment of every message, field, enum and enum value, by full name
    (``bullring.v2.DecisionRequest.kind``)."""
    files = descriptor_pb2.FileDescriptorSet()
    folder = Path(next(iter(bullring.contract.generated.__path__)))
    files.ParseFromString((folder / DESCRIPTORS).read_bytes())
    found: dict[str, str] = {}
    for file in files.file:
        names: dict[tuple[int, ...], str] = {}
        for index, message in enumerate(file.message_type):
            _name_message(names, (4, index), f"{file.package}.{message.name}", message)
        for index, enum in enumerate(file.enum_type):
            _name_enum(names, (5, index), f"{file.package}.{enum.name}", enum)
        for location in file.source_code_info.location:
            name = names.get(tuple(location.path))
            if name is not None and location.leading_comments.strip():
                found[name] = " ".join(location.leading_comments.split())
    return found


def _name_message(names: dict[tuple[int, ...], str], path: tuple[int, ...], name: str,
                  message: descriptor_pb2.DescriptorProto) -> None:
    names[path] = name
    for index, field in enumerate(message.field):
        names[(*path, 2, index)] = f"{name}.{field.name}"
    for index, nested in enumerate(message.nested_type):
        _name_message(names, (*path, 3, index), f"{name}.{nested.name}", nested)
    for index, enum in enumerate(message.enum_type):
        _name_enum(names, (*path, 4, index), f"{name}.{enum.name}", enum)


def _name_enum(names: dict[tuple[int, ...], str], path: tuple[int, ...], name: str,
               enum: descriptor_pb2.EnumDescriptorProto) -> None:
    names[path] = name
    for index, value in enumerate(enum.value):
        names[(*path, 2, index)] = f"{name}.{value.name}"


def _described(full_name: str) -> str:
    text = comments().get(full_name)
    if text is None:
        raise ContractError(f"{full_name} has no comment in the .proto")
    return text


def _enum(enum: EnumDescriptor) -> dict[str, Any]:
    values = "; ".join(f"{v.name}: {_described(f'{enum.full_name}.{v.name}').rstrip('.')}"
                       for v in enum.values)
    return {"type": "string", "enum": [v.name for v in enum.values],
            "description": f"{_described(enum.full_name)} {values}."}


def _field(field: FieldDescriptor, todo: list[Any]) -> dict[str, Any]:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value = field.message_type.fields_by_name["value"]
        return {"type": "object", "additionalProperties": _single(value, todo)}
    single = _single(field, todo)
    if field.is_repeated:
        return {"type": "array", "items": single}
    return single


def _single(field: FieldDescriptor, todo: list[Any]) -> dict[str, Any]:
    if field.message_type is not None:
        todo.append(field.message_type)
        return {"$ref": REF + field.message_type.name}
    if field.enum_type is not None:
        todo.append(field.enum_type)
        return {"$ref": REF + field.enum_type.name}
    if field.type in _INTEGER:
        return {"type": "integer", "format": _INTEGER[field.type]}
    if field.type == FieldDescriptor.TYPE_BOOL:
        return {"type": "boolean"}
    if field.type == FieldDescriptor.TYPE_STRING:
        return {"type": "string"}
    if field.type == FieldDescriptor.TYPE_BYTES:
        return {"type": "string", "format": "byte"}
    raise ContractError(f"{field.full_name}: no JSON schema for field type {field.type}")


def _message(message: Descriptor, todo: list[Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field in message.fields:
        schema = _field(field, todo)
        properties[field.name] = {**schema, "description": _described(field.full_name)}
        if field.containing_oneof is None and (field.is_repeated
                                               or field.message_type is None):
            required.append(field.name)
    description = _described(message.full_name)
    for oneof in message.oneofs:
        members = ", ".join(f.name for f in oneof.fields)
        description += f" Exactly one of: {members}."
    result: dict[str, Any] = {"type": "object", "description": description,
                              "properties": properties}
    if required:
        result["required"] = required
    return result


def schemas(roots: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Named schemas of ``roots`` and of every message and enum they hold, by type name."""
    todo: list[Any] = list(roots)
    named: dict[str, dict[str, Any]] = {}
    while todo:
        item = todo.pop()
        if item.name in named:
            continue
        if isinstance(item, EnumDescriptor):
            named[item.name] = _enum(item)
        else:
            named[item.name] = _message(item, todo)
    return named


def ref(name: str) -> dict[str, str]:
    """A reference to the named schema ``name``."""
    return {"$ref": REF + name}
