//! The arguments of `--invoke`, parsed as the export's parameters: decimal integers must fit
//! the signed type; hex (`0x…`) may give any bit pattern of the type's width.

use wrt_runtime::{InstantiateError, WasmType, WasmValue};

/// Parses `args` as the parameters `params` of the export `export` of `guest`.
pub(super) fn parse(
    guest: &str,
    export: &str,
    params: &[WasmType],
    args: &[String],
) -> Result<Vec<WasmValue>, InstantiateError> {
    let bad_args =
        |reason: String| InstantiateError::BadInvokeArgs { guest: guest.to_owned(), export: export.to_owned(), reason };
    if params.len() != args.len() {
        return Err(bad_args(format!("expects {} arguments, got {}", params.len(), args.len())));
    }
    params
        .iter()
        .zip(args)
        .enumerate()
        .map(|(i, (ty, arg))| value(ty, arg).map_err(|why| bad_args(format!("argument {}: {why}", i + 1))))
        .collect()
}

/// Parses one argument as a value of `ty`.
fn value(ty: &WasmType, arg: &str) -> Result<WasmValue, String> {
    let float = |_| format!("`{arg}` is not a number");
    Ok(match ty {
        WasmType::I32 => WasmValue::I32(int(arg, ty, 32)? as i32),
        WasmType::I64 => WasmValue::I64(int(arg, ty, 64)? as i64),
        WasmType::F32 => WasmValue::F32(arg.parse::<f32>().map_err(float)?),
        WasmType::F64 => WasmValue::F64(arg.parse::<f64>().map_err(float)?),
        other => return Err(format!("parameter type `{other}` is not supported")),
    })
}

/// Parses an integer for a type of `bits` bits: a decimal or signed hex value in the signed
/// range, or an unsigned hex value up to the largest bit pattern. Returns it as `i128`, to be
/// truncated to the type's width.
fn int(arg: &str, ty: &WasmType, bits: u32) -> Result<i128, String> {
    let (negative, digits) = arg.strip_prefix('-').map_or((false, arg), |d| (true, d));
    let hex = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X"));
    let magnitude = match hex {
        Some(hex) if !hex.starts_with(['+', '-']) => i128::from_str_radix(hex, 16),
        None if !digits.starts_with(['+', '-']) => digits.parse::<i128>(),
        _ => "".parse::<i128>(),
    }
    .map_err(|err| match err.kind() {
        std::num::IntErrorKind::PosOverflow => format!("`{arg}` is out of range for `{ty}`"),
        _ => format!("`{arg}` is not an integer"),
    })?;
    let value = if negative { -magnitude } else { magnitude };
    let (min, max) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
    let unsigned_max = (1i128 << bits) - 1;
    if (min..=max).contains(&value) || (hex.is_some() && !negative && value <= unsigned_max) {
        return Ok(value);
    }
    if hex.is_none() && (0..=unsigned_max).contains(&value) {
        return Err(format!(
            "`{arg}` is out of range for `{ty}` (decimal arguments are signed; give the bit pattern in hex: `{value:#x}`)"
        ));
    }
    Err(format!("`{arg}` is out of range for `{ty}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(ty: WasmType, arg: &str) -> Result<WasmValue, String> {
        value(&ty, arg)
    }

    #[test]
    fn integers_are_signed_in_decimal_and_any_bit_pattern_in_hex() {
        assert_eq!(one(WasmType::I32, "-2147483648"), Ok(WasmValue::I32(i32::MIN)));
        assert_eq!(one(WasmType::I32, "0xffffffff"), Ok(WasmValue::I32(-1)));
        assert_eq!(one(WasmType::I32, "-0x80000000"), Ok(WasmValue::I32(i32::MIN)));
        assert_eq!(one(WasmType::I64, "0xFFFFFFFFFFFFFFFF"), Ok(WasmValue::I64(-1)));
        assert_eq!(
            one(WasmType::I32, "4294967295"),
            Err("`4294967295` is out of range for `i32` (decimal arguments are signed; give the bit pattern in hex: `0xffffffff`)".into())
        );
        assert_eq!(one(WasmType::I32, "0x100000000"), Err("`0x100000000` is out of range for `i32`".into()));
        assert_eq!(one(WasmType::I32, "-0x80000001"), Err("`-0x80000001` is out of range for `i32`".into()));
        for bad in ["", "+1", "--1", "0x", "0x-1", "1.5", "one"] {
            assert_eq!(one(WasmType::I32, bad), Err(format!("`{bad}` is not an integer")), "{bad:?}");
        }
    }

    #[test]
    fn floats_and_unsupported_types() {
        assert_eq!(one(WasmType::F64, "-1.5"), Ok(WasmValue::F64(-1.5)));
        assert_eq!(one(WasmType::F32, "inf"), Ok(WasmValue::F32(f32::INFINITY)));
        assert_eq!(one(WasmType::F32, "x"), Err("`x` is not a number".into()));
        assert_eq!(
            one(WasmType::Unsupported("v128".into()), "1"),
            Err("parameter type `v128` is not supported".into())
        );
    }

    #[test]
    fn argument_count_and_position_are_named() {
        let params = [WasmType::I32, WasmType::I64];
        let err = parse("g.wasm", "add", &params, &["1".into()]).unwrap_err().to_string();
        assert_eq!(err, "export `add` of guest `g.wasm`: expects 2 arguments, got 1");
        let err = parse("g.wasm", "add", &params, &["1".into(), "x".into()]).unwrap_err().to_string();
        assert_eq!(err, "export `add` of guest `g.wasm`: argument 2: `x` is not an integer");
        let ok = parse("g.wasm", "add", &params, &["1".into(), "-2".into()]).unwrap();
        assert_eq!(ok, [WasmValue::I32(1), WasmValue::I64(-2)]);
    }
}
