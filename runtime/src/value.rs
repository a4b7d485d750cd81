//! The values an invoked export takes and returns, and their types.

use std::fmt;

use wasmtime::{Val, ValType};

/// A value passed to or returned by an invoked export ([`crate::Instance::invoke`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum WasmValue {
    /// `i32`
    I32(i32),
    /// `i64`
    I64(i64),
    /// `f32`
    F32(f32),
    /// `f64`
    F64(f64),
}

impl WasmValue {
    /// The value's type.
    pub fn ty(&self) -> WasmType {
        match self {
            WasmValue::I32(_) => WasmType::I32,
            WasmValue::I64(_) => WasmType::I64,
            WasmValue::F32(_) => WasmType::F32,
            WasmValue::F64(_) => WasmType::F64,
        }
    }

    /// The value as wasmtime passes it.
    pub(crate) fn to_val(self) -> Val {
        match self {
            WasmValue::I32(v) => Val::I32(v),
            WasmValue::I64(v) => Val::I64(v),
            WasmValue::F32(v) => Val::F32(v.to_bits()),
            WasmValue::F64(v) => Val::F64(v.to_bits()),
        }
    }

    /// The value of a result wasmtime returned, if it is of a type wrt returns.
    pub(crate) fn from_val(val: &Val) -> Option<Self> {
        Some(match *val {
            Val::I32(v) => WasmValue::I32(v),
            Val::I64(v) => WasmValue::I64(v),
            Val::F32(bits) => WasmValue::F32(f32::from_bits(bits)),
            Val::F64(bits) => WasmValue::F64(f64::from_bits(bits)),
            _ => return None,
        })
    }
}

impl fmt::Display for WasmValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WasmValue::I32(v) => write!(f, "{v}"),
            WasmValue::I64(v) => write!(f, "{v}"),
            WasmValue::F32(v) => write!(f, "{v}"),
            WasmValue::F64(v) => write!(f, "{v}"),
        }
    }
}

/// The type of a parameter or result of an exported function ([`crate::Guest::export_params`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WasmType {
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `f32`
    F32,
    /// `f64`
    F64,
    /// A type no [`WasmValue`] holds (`v128`, a reference), as wasmtime writes it: an export
    /// with such a parameter cannot be invoked.
    Unsupported(String),
}

impl WasmType {
    pub(crate) fn of(ty: &ValType) -> Self {
        match ty {
            ValType::I32 => WasmType::I32,
            ValType::I64 => WasmType::I64,
            ValType::F32 => WasmType::F32,
            ValType::F64 => WasmType::F64,
            other => WasmType::Unsupported(other.to_string()),
        }
    }
}

impl fmt::Display for WasmType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WasmType::I32 => "i32",
            WasmType::I64 => "i64",
            WasmType::F32 => "f32",
            WasmType::F64 => "f64",
            WasmType::Unsupported(name) => name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_pass_through_wasmtime_unchanged() {
        let nan = f32::from_bits(0x7fc0_0001);
        for value in [WasmValue::I32(-1), WasmValue::I64(i64::MIN), WasmValue::F32(nan), WasmValue::F64(-0.0)] {
            let back = WasmValue::from_val(&value.to_val()).unwrap();
            assert_eq!(format!("{:?}", back.to_val()), format!("{:?}", value.to_val()));
            assert_eq!(back.ty(), value.ty());
        }
    }

    #[test]
    fn types_print_as_wasmtime_prints_them() {
        for ty in [ValType::I32, ValType::I64, ValType::F32, ValType::F64, ValType::V128, ValType::EXTERNREF] {
            assert_eq!(WasmType::of(&ty).to_string(), ty.to_string());
        }
        assert!(matches!(WasmType::of(&ValType::V128), WasmType::Unsupported(_)));
    }
}
