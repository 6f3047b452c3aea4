"""The gRPC side: servicers that translate protobuf to domain values and hand over."""
