//! Generates the contract's messages as Rust types (`$OUT_DIR/contract.rs`) on every build.
//!
//! The contract (`proto/` in this folder, else the repository's `proto/`) is read by Debian's
//! pure-Rust proto parser (protobuf-codegen-pure); each message becomes a struct and each
//! enum an enum, with serde's derives for the proto3 JSON mapping the HTTP API speaks: field
//! names as in the contract (lowerCamelCase accepted too), enums by name, every message field
//! and oneof member an `Option`, unknown fields ignored.

use protobuf::descriptor::{
    DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FieldDescriptorProto_Label,
    FieldDescriptorProto_Type as T,
};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
];

fn contract_dir() -> PathBuf {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    for candidate in [here.join("proto"), here.join("../../proto")] {
        if candidate.is_dir() {
            return candidate;
        }
    }
    panic!("no contract: copy the repository's proto/ folder into {}", here.display());
}

fn protos(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            protos(&path, found);
        } else if path.extension().map_or(false, |e| e == "proto") {
            found.push(path);
        }
    }
}

fn camel(name: &str, first_upper: bool) -> String {
    let mut out = String::new();
    let mut upper = first_upper;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn short(type_name: &str) -> &str {
    type_name.rsplit('.').next().unwrap()
}

fn ident(name: &str) -> String {
    if KEYWORDS.contains(&name) {
        format!("r#{}", name)
    } else {
        name.to_string()
    }
}

fn scalar(field: &FieldDescriptorProto) -> Option<&'static str> {
    Some(match field.get_field_type() {
        T::TYPE_INT32 | T::TYPE_SINT32 | T::TYPE_SFIXED32 => "i32",
        T::TYPE_UINT32 | T::TYPE_FIXED32 => "u32",
        T::TYPE_INT64 | T::TYPE_SINT64 | T::TYPE_SFIXED64 => "i64",
        T::TYPE_UINT64 | T::TYPE_FIXED64 => "u64",
        T::TYPE_BOOL => "bool",
        T::TYPE_DOUBLE => "f64",
        T::TYPE_FLOAT => "f32",
        T::TYPE_STRING | T::TYPE_BYTES => "String",
        _ => return None,
    })
}

fn field_type(field: &FieldDescriptorProto, message: &DescriptorProto) -> String {
    if field.get_field_type() == T::TYPE_MESSAGE {
        let entry = message.get_nested_type().iter().find(|n| {
            n.get_options().get_map_entry() && short(field.get_type_name()) == n.get_name()
        });
        if let Some(entry) = entry {
            let value = &entry.get_field()[1];
            let value_type = scalar(value).map(str::to_string)
                .unwrap_or_else(|| short(value.get_type_name()).to_string());
            return format!("std::collections::HashMap<String, {}>", value_type);
        }
    }
    let base = scalar(field).map(str::to_string)
        .unwrap_or_else(|| short(field.get_type_name()).to_string());
    let repeated = field.get_label() == FieldDescriptorProto_Label::LABEL_REPEATED;
    if repeated {
        format!("Vec<{}>", base)
    } else if field.get_field_type() == T::TYPE_MESSAGE || field.has_oneof_index()
        || field.get_proto3_optional() {
        format!("Option<{}>", base)
    } else {
        base
    }
}

fn write_message(out: &mut String, message: &DescriptorProto) {
    writeln!(out, "/// The contract's `{}` message.", message.get_name()).unwrap();
    writeln!(out, "#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]").unwrap();
    writeln!(out, "#[serde(default)]\npub struct {} {{", message.get_name()).unwrap();
    for field in message.get_field() {
        let rust_type = field_type(field, message);
        let json = camel(field.get_name(), false);
        writeln!(out, "    /// `{}` in the contract.", field.get_name()).unwrap();
        if json != field.get_name() {
            writeln!(out, "    #[serde(alias = \"{}\")]", json).unwrap();
        }
        if rust_type.starts_with("Option<") {
            writeln!(out, "    #[serde(skip_serializing_if = \"Option::is_none\")]").unwrap();
        }
        if rust_type == "i64" || rust_type == "u64" {
            writeln!(out, "    #[serde(with = \"int64\")]").unwrap();
        }
        writeln!(out, "    pub {}: {},", ident(field.get_name()), rust_type).unwrap();
    }
    writeln!(out, "}}\n").unwrap();
}

fn write_enum(out: &mut String, found: &EnumDescriptorProto) {
    let prefix = format!("{}_", camel(found.get_name(), true).chars().fold(
        String::new(), |mut s, c| {
            if c.is_uppercase() && !s.is_empty() {
                s.push('_');
            }
            s.extend(c.to_uppercase());
            s
        }));
    writeln!(out, "/// The contract's `{}` enum, by name on the wire.", found.get_name()).unwrap();
    writeln!(out, "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]")
        .unwrap();
    writeln!(out, "pub enum {} {{", found.get_name()).unwrap();
    for value in found.get_value() {
        let variant = camel(&value.get_name().trim_start_matches(&prefix).to_lowercase(), true);
        writeln!(out, "    /// `{}` = {}", value.get_name(), value.get_number()).unwrap();
        writeln!(out, "    #[serde(rename = \"{}\")]\n    {},", value.get_name(), variant).unwrap();
    }
    writeln!(out, "    /// A value this build of the contract does not know.").unwrap();
    writeln!(out, "    #[serde(other)]\n    Unknown,\n}}\n").unwrap();
    let first = &found.get_value()[0];
    let variant = camel(&first.get_name().trim_start_matches(&prefix).to_lowercase(), true);
    writeln!(out, "impl Default for {} {{\n    fn default() -> Self {{\n        Self::{}\n    }}\n}}\n",
             found.get_name(), variant).unwrap();
}

const PREAMBLE: &str = r#"// Generated from the contract by build.rs on every build: never edit.
use serde::{Deserialize, Serialize};

/// 64-bit integers travel as text in the proto3 JSON mapping; numbers are read too.
mod int64 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<T: ToString, S: Serializer>(value: &T, out: S) -> Result<S::Ok, S::Error> {
        out.serialize_str(&value.to_string())
    }

    pub fn deserialize<'de, T, D>(input: D) -> Result<T, D::Error>
    where
        T: std::str::FromStr,
        D: Deserializer<'de>,
    {
        let value = serde_json::Value::deserialize(input)?;
        let text = match &value {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        text.parse().map_err(|_| serde::de::Error::custom(format!("not an integer: {}", value)))
    }
}

"#;

fn main() {
    let contract = contract_dir();
    let mut inputs = Vec::new();
    protos(&contract, &mut inputs);
    inputs.sort();
    println!("cargo:rerun-if-changed={}", contract.display());
    for input in &inputs {
        println!("cargo:rerun-if-changed={}", input.display());
    }
    let input_refs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let parsed = protobuf_codegen_pure::parse_and_typecheck(&[contract.as_path()], &input_refs)
        .unwrap_or_else(|e| panic!("cannot read the contract in {}: {}", contract.display(), e));
    let mut out = String::from(PREAMBLE);
    for file in &parsed.file_descriptors {
        for found in file.get_enum_type() {
            write_enum(&mut out, found);
        }
        for message in file.get_message_type() {
            for found in message.get_enum_type() {
                write_enum(&mut out, found);
            }
            write_message(&mut out, message);
        }
    }
    let path = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("contract.rs");
    std::fs::write(path, out).unwrap();
}
