"""The contract as every kit's code generator can read it: the Go and Rust kits generate
their code from proto/ with Debian's protoc-gen-go and protobuf-codegen-pure, which refuse
a proto3 ``optional`` field (and with it the whole file)."""

from __future__ import annotations

from google.protobuf import descriptor_pb2

from bullring.contract.generated.bullring.v2 import referee_pb2


def _messages(messages: list[descriptor_pb2.DescriptorProto]
              ) -> list[descriptor_pb2.DescriptorProto]:
    """Every message, nested ones too."""
    found = []
    for message in messages:
        found.append(message)
        found.extend(_messages(list(message.nested_type)))
    return found


def test_no_field_is_a_proto3_optional() -> None:
    """A field that needs presence is a one-field oneof, which every generator reads."""
    contract = descriptor_pb2.FileDescriptorProto()
    referee_pb2.DESCRIPTOR.CopyToProto(contract)
    optional = [f"{message.name}.{field.name}" for message in _messages(list(contract.message_type))
                for field in message.field if field.proto3_optional]
    assert optional == [], optional
    assert any(len(message.oneof_decl) for message in contract.message_type)
