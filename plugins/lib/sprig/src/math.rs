//! Math: Sprig's integer functions (arguments converted with cast, results `int64`,
//! Go's wrapping and divide-by-zero panic), float functions (`float64` results; `addf` and
//! friends computed in decimal like shopspring/decimal), rounding, and the integer
//! sequences `until`, `untilStep` and `seq`.

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg, arg_float, arg_int};
use capstan_gotmpl::value::Value;

use crate::conv::{to_float64, to_int64};
use crate::crypto::random_below;
use crate::decimal::Decimal;

fn divide_by_zero() -> FuncError {
    FuncError::new("runtime error: integer divide by zero")
}

/// A decimal operation on float arguments, as Sprig's `execDecimalOp`.
fn decimal_fold(
    first: f64,
    rest: &[Value],
    op: fn(Decimal, Decimal) -> Result<Option<Decimal>, &'static str>,
    fallback: fn(f64, f64) -> f64,
) -> Result<Value, FuncError> {
    let mut exact = Decimal::from_f64(first);
    let mut approximate = first;
    for value in rest {
        let x = to_float64(value);
        approximate = fallback(approximate, x);
        exact = match (exact, Decimal::from_f64(x)) {
            (Some(a), Some(b)) => op(a, b).map_err(FuncError::new)?,
            _ => None,
        };
    }
    Ok(Value::Float(
        exact.map(Decimal::to_f64).unwrap_or(approximate),
    ))
}

pub fn register(funcs: &mut FuncMap) {
    funcs.add("add1", 1, false, |args| {
        Ok(Value::Int64(to_int64(&arg(args, 0)).wrapping_add(1)))
    });
    funcs.add("add", 0, true, |args| {
        Ok(Value::Int64(
            args.iter()
                .fold(0i64, |sum, v| sum.wrapping_add(to_int64(v))),
        ))
    });
    funcs.add("sub", 2, false, |args| {
        Ok(Value::Int64(
            to_int64(&arg(args, 0)).wrapping_sub(to_int64(&arg(args, 1))),
        ))
    });
    funcs.add("div", 2, false, |args| {
        let (a, b) = (to_int64(&arg(args, 0)), to_int64(&arg(args, 1)));
        if b == 0 {
            return Err(divide_by_zero());
        }
        Ok(Value::Int64(a.wrapping_div(b)))
    });
    funcs.add("mod", 2, false, |args| {
        let (a, b) = (to_int64(&arg(args, 0)), to_int64(&arg(args, 1)));
        if b == 0 {
            return Err(divide_by_zero());
        }
        Ok(Value::Int64(a.wrapping_rem(b)))
    });
    funcs.add("mul", 1, true, |args| {
        Ok(Value::Int64(
            args.iter()
                .skip(1)
                .fold(to_int64(&args[0]), |p, v| p.wrapping_mul(to_int64(v))),
        ))
    });
    funcs.add("randInt", 2, false, |args| {
        let (min, max) = (arg_int(args, 0)?, arg_int(args, 1)?);
        let span = max.wrapping_sub(min);
        if span <= 0 {
            return Err(FuncError::new("invalid argument to Intn"));
        }
        Ok(Value::Int(min + random_below(span as u64) as i64))
    });
    funcs.add("add1f", 1, false, |args| {
        decimal_fold(
            to_float64(&arg(args, 0)),
            &[Value::Int(1)],
            |a, b| Ok(a.add(b)),
            |a, b| a + b,
        )
    });
    funcs.add("addf", 0, true, |args| {
        decimal_fold(0.0, args, |a, b| Ok(a.add(b)), |a, b| a + b)
    });
    funcs.add("subf", 1, true, |args| {
        decimal_fold(
            to_float64(&args[0]),
            &args[1..],
            |a, b| Ok(a.sub(b)),
            |a, b| a - b,
        )
    });
    funcs.add("mulf", 1, true, |args| {
        decimal_fold(
            to_float64(&args[0]),
            &args[1..],
            |a, b| Ok(a.mul(b)),
            |a, b| a * b,
        )
    });
    funcs.add("divf", 1, true, |args| {
        decimal_fold(to_float64(&args[0]), &args[1..], Decimal::div, |a, b| a / b)
    });
    for name in ["max", "biggest"] {
        funcs.add(name, 1, true, |args| {
            Ok(Value::Int64(
                args.iter().map(to_int64).fold(i64::MIN, i64::max),
            ))
        });
    }
    funcs.add("min", 1, true, |args| {
        Ok(Value::Int64(
            args.iter().map(to_int64).fold(i64::MAX, i64::min),
        ))
    });
    funcs.add("maxf", 1, true, |args| {
        Ok(Value::Float(
            args.iter()
                .skip(1)
                .map(to_float64)
                .fold(to_float64(&args[0]), go_max),
        ))
    });
    funcs.add("minf", 1, true, |args| {
        Ok(Value::Float(
            args.iter()
                .skip(1)
                .map(to_float64)
                .fold(to_float64(&args[0]), go_min),
        ))
    });
    funcs.add("ceil", 1, false, |args| {
        Ok(Value::Float(to_float64(&arg(args, 0)).ceil()))
    });
    funcs.add("floor", 1, false, |args| {
        Ok(Value::Float(to_float64(&arg(args, 0)).floor()))
    });
    funcs.add("round", 2, true, |args| {
        let value = to_float64(&arg(args, 0));
        let places = arg_int(args, 1)? as f64;
        let round_on = if args.len() > 2 {
            arg_float(args, 2)?
        } else {
            0.5
        };
        Ok(Value::Float(round(value, places, round_on)))
    });
    funcs.add("until", 1, false, |args| {
        let count = arg_int(args, 0)?;
        Ok(int_list(until_step(
            0,
            count,
            if count < 0 { -1 } else { 1 },
        )?))
    });
    funcs.add("untilStep", 3, false, |args| {
        let (start, stop, step) = (arg_int(args, 0)?, arg_int(args, 1)?, arg_int(args, 2)?);
        Ok(int_list(until_step(start, stop, step)?))
    });
    funcs.add("seq", 0, true, |args| {
        let params = (0..args.len())
            .map(|i| arg_int(args, i))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Value::from(seq(&params)?))
    });
}

/// Go's `math.Max` (NaN wins; +0 beats -0).
fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() { b } else { a };
    }
    a.max(b)
}

/// Go's `math.Min`.
fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() { a } else { b };
    }
    a.min(b)
}

/// Sprig's `round`: scale, round up when the fraction reaches `round_on`, scale back.
fn round(value: f64, places: f64, round_on: f64) -> f64 {
    let pow = 10f64.powf(places);
    let digit = pow * value;
    let fraction = digit - digit.trunc();
    let rounded = if fraction >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    rounded / pow
}

fn int_list(values: Vec<i64>) -> Value {
    Value::from(values.into_iter().map(Value::Int).collect::<Vec<_>>())
}

/// The longest sequence `until`, `untilStep` and `seq` build. Go has no bound (it runs out
/// of memory instead); this keeps a template from exhausting the plugin's memory.
const MAX_SEQUENCE: i128 = 1 << 24;

/// Sprig's `untilStep`: from `start` towards `stop` (exclusive) by `step`; empty when the
/// step goes the wrong way.
fn until_step(start: i64, stop: i64, step: i64) -> Result<Vec<i64>, FuncError> {
    if step == 0 || (stop < start) != (step < 0) || stop == start {
        return Ok(Vec::new());
    }
    let span = (i128::from(stop) - i128::from(start)).abs();
    let count = (span + i128::from(step).abs() - 1) / i128::from(step).abs();
    if count > MAX_SEQUENCE {
        return Err(FuncError::new("runtime error: makeslice: len out of range"));
    }
    Ok((0..count as i64).map(|k| start + k * step).collect())
}

/// Sprig's `seq` (like the Unix command): `seq END`, `seq START END`, `seq START STEP END`.
fn seq(params: &[i64]) -> Result<String, FuncError> {
    let numbers = match *params {
        [end] => {
            let increment = if end < 1 { -1 } else { 1 };
            until_step(1, end.saturating_add(increment), increment)?
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            until_step(start, end.saturating_add(step), step)?
        }
        [start, step, end] => {
            let increment = if end < start { -1 } else { 1 };
            if end < start && step > 0 {
                return Ok(String::new());
            }
            until_step(start, end.saturating_add(increment), step)?
        }
        _ => return Ok(String::new()),
    };
    Ok(numbers
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(" "))
}

#[cfg(test)]
mod tests {
    use crate::testing::*;
    use capstan_gotmpl::value::Value;

    #[test]
    fn snippets_corpus() {
        // Real Helm outputs from shared/helm-parity/snippets.yaml.
        assert_eq!(show("add", &[i(1), i(2), i(3)]), "6");
        assert_eq!(show("add1", &[i(5)]), "6");
        assert_eq!(show("sub", &[i(5), i(2)]), "3");
        assert_eq!(show("div", &[i(7), i(2)]), "3");
        assert_eq!(show("mod", &[i(7), i(3)]), "1");
        assert_eq!(show("mul", &[i(2), i(3), i(4)]), "24");
        assert_eq!(show("max", &[i(1), i(5), i(3)]), "5");
        assert_eq!(show("min", &[i(4), i(2), i(9)]), "2");
        assert_eq!(show("floor", &[f(1.7)]), "1");
        assert_eq!(show("ceil", &[f(1.2)]), "2");
        assert_eq!(show("round", &[f(1.2345), i(2)]), "1.23");
        assert_eq!(show("addf", &[f(1.5), i(2)]), "3.5");
        assert_eq!(show("subf", &[i(3), f(1.25)]), "1.75");
        assert_eq!(show("mulf", &[f(1.5), i(2)]), "3");
        assert_eq!(show("divf", &[i(1), i(3)]), "0.3333333333333333");
        assert_eq!(show("maxf", &[i(1), f(2.5)]), "2.5");
        assert_eq!(show("minf", &[i(1), f(2.5)]), "1");
        assert_eq!(show("add", &[f(1.5), i(1)]), "2");
        assert_eq!(show("add", &[f(42.0), i(1)]), "43");
        assert_eq!(show("mul", &[f(1_000_000.0), i(2)]), "2000000");
        assert_eq!(show("div", &[f(1_000_000.0), i(3)]), "333333");
        assert_eq!(show("add", &[s("3"), i(4)]), "7");
        assert_eq!(show("until", &[i(3)]), "[0 1 2]");
        assert_eq!(show("untilStep", &[i(0), i(10), i(3)]), "[0 3 6 9]");
        assert_eq!(show("seq", &[i(3)]), "1 2 3");
        assert_eq!(show("seq", &[i(2), i(5)]), "2 3 4 5");
        assert_eq!(show("seq", &[i(5), i(-1), i(2)]), "5 4 3 2");
        assert_eq!(show("until", &[i(0)]), "[]");
    }

    #[test]
    fn sprig_numeric_tests() {
        // Sprig numeric_test.go (pipelines written out: `{{ 2 | divf 5 4 }}` is divf 5 4 2).
        assert_eq!(
            show("biggest", &[i(1), i(2), i(3), i(345), i(5), i(6), i(7)]),
            "345"
        );
        assert_eq!(show("max", &[i(345)]), "345");
        assert_eq!(
            show("maxf", &[i(1), i(2), i(3), f(345.7), i(5), i(6), i(7)]),
            "345.7"
        );
        assert_eq!(
            show("min", &[i(1), i(2), i(3), i(345), i(5), i(6), i(7)]),
            "1"
        );
        assert_eq!(
            show("minf", &[f(1.4), i(2), i(3), f(345.6), i(5), i(6), i(7)]),
            "1.4"
        );
        assert_eq!(show("minf", &[i(345)]), "345");
        assert_eq!(show("add1", &[i(3)]), "4");
        assert_eq!(show("add1f", &[f(3.4)]), "4.4");
        assert_eq!(show("add", &[i(1), i(2), i(3)]), "6");
        assert_eq!(show("addf", &[f(1.5), f(2.2), i(3)]), "6.7");
        assert_eq!(show("div", &[i(5), i(4)]), "1");
        assert_eq!(show("divf", &[i(5), i(4), i(2)]), "0.625");
        assert_eq!(show("mul", &[s("2"), i(3), s("4"), i(1)]), "24");
        assert_eq!(show("mulf", &[s("2.4"), i(10), s("4"), f(1.2)]), "115.2");
        assert_eq!(show("sub", &[i(14), i(3)]), "11");
        assert_eq!(show("subf", &[f(4.5), i(1), i(3)]), "0.5");
        assert_eq!(show("toDecimal", &[s("777")]), "511");
        for (args, expected) in [
            (vec![0, 1, 3], "0 1 2 3"),
            (vec![0, 3, 10], "0 3 6 9"),
            (vec![3, 3, 2], ""),
            (vec![3, -3, 2], "3"),
            (vec![], ""),
            (vec![0, 4], "0 1 2 3 4"),
            (vec![5], "1 2 3 4 5"),
            (vec![-5], "1 0 -1 -2 -3 -4 -5"),
            (vec![0], "1 0"),
            (vec![0, 1, 2, 3], ""),
            (vec![0, -4], "0 -1 -2 -3 -4"),
        ] {
            let values: Vec<_> = args.iter().map(|n| i(*n)).collect();
            assert_eq!(show("seq", &values), expected, "seq {args:?}");
        }
        assert_eq!(show("untilStep", &[i(3), i(6), i(1)]), "[3 4 5]");
        assert_eq!(show("untilStep", &[i(0), i(-10), i(-2)]), "[0 -2 -4 -6 -8]");
        for (start, stop, step) in [(3, 0, 1), (3, 99, 0), (3, 99, -1), (3, 0, 0)] {
            assert_eq!(show("untilStep", &[i(start), i(stop), i(step)]), "[]");
        }
    }

    #[test]
    fn types_and_errors() {
        assert!(matches!(call("add", &[i(1), i(2)]), Ok(Value::Int64(3))));
        assert!(matches!(call("addf", &[f(0.1), f(0.2)]), Ok(Value::Float(x)) if x == 0.3));
        assert!(matches!(call("ceil", &[i(1)]), Ok(Value::Float(x)) if x == 1.0));
        assert!(
            matches!(call("until", &[i(2)]), Ok(Value::List(l)) if matches!(l[1], Value::Int(1)))
        );
        assert_eq!(
            error("div", &[i(1), i(0)]),
            "runtime error: integer divide by zero"
        );
        assert_eq!(
            error("mod", &[i(1), i(0)]),
            "runtime error: integer divide by zero"
        );
        assert_eq!(error("divf", &[i(1), i(0)]), "decimal division by zero");
        // Sprig docs and numeric_test.go.
        assert_eq!(show("until", &[i(-3)]), "[0 -1 -2]");
        assert_eq!(show("untilStep", &[i(3), i(6), i(0)]), "[]");
        assert_eq!(show("seq", &[i(0)]), "1 0");
        assert_eq!(show("seq", &[i(-3)]), "1 0 -1 -2 -3");
        assert_eq!(show("seq", &[i(2), i(-2)]), "2 1 0 -1 -2");
        assert_eq!(show("seq", &[i(0), i(2), i(10)]), "0 2 4 6 8 10");
        assert_eq!(show("seq", &[i(0), i(-2), i(-10)]), "0 -2 -4 -6 -8 -10");
        assert_eq!(show("seq", &[i(10), i(2), i(0)]), "");
        assert_eq!(show("seq", &[]), "");
        assert_eq!(show("round", &[f(123.555555), i(3)]), "123.556");
        assert_eq!(show("round", &[f(123.55555), i(3), f(0.4)]), "123.556");
        assert_eq!(show("round", &[s("123.5"), i(0)]), "124");
        assert_eq!(show("biggest", &[i(1), s("8")]), "8");
        assert_eq!(show("add1f", &[f(1.1)]), "2.1");
        let n = call("randInt", &[i(5), i(7)]).unwrap().as_int().unwrap();
        assert!((5..7).contains(&n));
        assert_eq!(error("randInt", &[i(5), i(5)]), "invalid argument to Intn");
        // Sequences too long to hold are refused instead of exhausting memory.
        assert_eq!(
            error("until", &[i(1 << 40)]),
            "runtime error: makeslice: len out of range"
        );
        // Go's loop would overflow here and never end; the sequence stops before overflowing.
        assert_eq!(
            show("untilStep", &[i(0), i(i64::MAX), i(i64::MAX / 2)]),
            "[0 4611686018427387903 9223372036854775806]"
        );
    }
}
