//! The slice of shopspring/decimal that Sprig's float functions (`addf`, `subf`, `mulf`,
//! `divf`, `add1f`) use: a float turned into its shortest decimal, exact addition,
//! subtraction and multiplication, division rounded half away from zero to 16 places, and
//! the nearest float64 of the result.

/// `mantissa × 10^exponent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal {
    mantissa: i128,
    exponent: i32,
}

/// shopspring's `DivisionPrecision`.
const DIVISION_PRECISION: i32 = 16;

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Decimal {
    /// `decimal.NewFromFloat`: the shortest decimal that rounds to `x`; `None` for NaN and
    /// infinities (which panic in Go).
    pub fn from_f64(x: f64) -> Option<Decimal> {
        if !x.is_finite() {
            return None;
        }
        if x == 0.0 {
            return Some(Decimal {
                mantissa: 0,
                exponent: 0,
            });
        }
        let formatted = format!("{:e}", x);
        let (digits, exp) = formatted.split_once('e')?;
        let exp: i32 = exp.parse().ok()?;
        let negative = digits.starts_with('-');
        let digits: String = digits.chars().filter(char::is_ascii_digit).collect();
        let mantissa: i128 = digits.parse().ok()?;
        Some(Decimal {
            mantissa: if negative { -mantissa } else { mantissa },
            exponent: exp - (digits.len() as i32 - 1),
        })
    }

    fn rescale(self, exponent: i32) -> Option<Decimal> {
        let shift = u32::try_from(self.exponent - exponent).ok()?;
        Some(Decimal {
            mantissa: self.mantissa.checked_mul(pow10(shift)?)?,
            exponent,
        })
    }

    pub fn add(self, other: Decimal) -> Option<Decimal> {
        let exponent = self.exponent.min(other.exponent);
        let (a, b) = (self.rescale(exponent)?, other.rescale(exponent)?);
        Some(Decimal {
            mantissa: a.mantissa.checked_add(b.mantissa)?,
            exponent,
        })
    }

    pub fn sub(self, other: Decimal) -> Option<Decimal> {
        self.add(Decimal {
            mantissa: other.mantissa.checked_neg()?,
            exponent: other.exponent,
        })
    }

    pub fn mul(self, other: Decimal) -> Option<Decimal> {
        Some(Decimal {
            mantissa: self.mantissa.checked_mul(other.mantissa)?,
            exponent: self.exponent.checked_add(other.exponent)?,
        })
    }

    /// `Div`: the quotient rounded half away from zero to 16 decimal places. `Err` on
    /// division by zero (a panic in Go), `Ok(None)` when the numbers are too large here.
    pub fn div(self, other: Decimal) -> Result<Option<Decimal>, &'static str> {
        if other.mantissa == 0 {
            return Err("decimal division by zero");
        }
        let shift = self.exponent - other.exponent + DIVISION_PRECISION;
        let (numerator, denominator) = if shift >= 0 {
            match pow10(shift as u32).and_then(|p| self.mantissa.checked_mul(p)) {
                Some(n) => (n, other.mantissa),
                None => return Ok(None),
            }
        } else {
            match pow10((-shift) as u32).and_then(|p| other.mantissa.checked_mul(p)) {
                Some(d) => (self.mantissa, d),
                None => return Ok(None),
            }
        };
        let mut quotient = numerator / denominator;
        let remainder = numerator % denominator;
        if remainder != 0 && remainder.unsigned_abs() * 2 >= denominator.unsigned_abs() {
            if (numerator < 0) == (denominator < 0) {
                quotient += 1;
            } else {
                quotient -= 1;
            }
        }
        Ok(Some(Decimal {
            mantissa: quotient,
            exponent: -DIVISION_PRECISION,
        }))
    }

    /// The nearest float64.
    pub fn to_f64(self) -> f64 {
        format!("{}e{}", self.mantissa, self.exponent)
            .parse()
            .unwrap_or(f64::NAN)
    }
}

#[cfg(test)]
mod tests {
    use super::Decimal;

    fn d(x: f64) -> Decimal {
        Decimal::from_f64(x).unwrap()
    }

    #[test]
    fn exact_decimal_arithmetic() {
        // 0.1 + 0.2 is exactly 0.3 in decimal (shopspring), unlike float64's 0.30000000000000004.
        assert_eq!(d(0.1).add(d(0.2)).unwrap().to_f64(), 0.3);
        assert_eq!(d(1.1).mul(d(3.0)).unwrap().to_f64(), 3.3);
        assert_eq!(
            d(1.0).div(d(3.0)).unwrap().unwrap().to_f64(),
            0.3333333333333333
        );
        assert_eq!(
            d(2.0).div(d(3.0)).unwrap().unwrap().to_f64(),
            0.6666666666666667
        );
        assert!(d(1.0).div(d(0.0)).is_err());
    }
}
