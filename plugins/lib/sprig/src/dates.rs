//! Dates: a Go `time.Time` object (`now`, `toDate`, `dateModify` return one; it prints as
//! Go's `Time.String`, marshals as RFC 3339 and offers the common methods), Go layout
//! formatting and parsing (`date`, `dateInZone`, `htmlDate`, `toDate`), and Go durations
//! (`duration`, `durationRound`, `ago`, `dateModify`). There is no zone database here:
//! every zone, `Local` included, is UTC — what Go does when `LoadLocation` fails.

use std::rc::Rc;
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg, arg_str, wrong_type};
use capstan_gotmpl::gofmt::quote;
use capstan_gotmpl::value::{Object, Value};

const NANOS_PER_SECOND: i128 = 1_000_000_000;
/// Unix seconds of Go's zero time, January 1, year 1, UTC.
const ZERO_TIME_UNIX: i64 = -62_135_596_800;

pub fn register(funcs: &mut FuncMap) {
    funcs.add("now", 0, false, |_| Ok(GoTime::now().into_value()));
    funcs.add("date", 2, false, |args| {
        Ok(Value::from(date_in_zone(
            arg_str(args, 0)?,
            &arg(args, 1),
            "Local",
        )))
    });
    for name in ["dateInZone", "date_in_zone"] {
        funcs.add(name, 3, false, |args| {
            let (layout, zone) = (arg_str(args, 0)?, arg_str(args, 2)?);
            Ok(Value::from(date_in_zone(layout, &arg(args, 1), zone)))
        });
    }
    funcs.add("htmlDate", 1, false, |args| {
        Ok(Value::from(date_in_zone(
            "2006-01-02",
            &arg(args, 0),
            "Local",
        )))
    });
    funcs.add("htmlDateInZone", 2, false, |args| {
        Ok(Value::from(date_in_zone(
            "2006-01-02",
            &arg(args, 0),
            arg_str(args, 1)?,
        )))
    });
    for name in ["dateModify", "date_modify"] {
        funcs.add(name, 2, false, |args| {
            let (text, time) = (arg_str(args, 0)?, arg_time(args, 1)?);
            Ok(match parse_duration(text) {
                Ok(d) => time.add(d).into_value(),
                Err(_) => time.into_value(),
            })
        });
    }
    for name in ["mustDateModify", "must_date_modify"] {
        funcs.add(name, 2, false, |args| {
            let (text, time) = (arg_str(args, 0)?, arg_time(args, 1)?);
            let d = parse_duration(text).map_err(FuncError::new)?;
            Ok(time.add(d).into_value())
        });
    }
    funcs.add("ago", 1, false, |args| {
        let then = time_or_now(&arg(args, 0));
        let since = GoTime::now().nanos_since(&then);
        Ok(Value::from(format_duration(round_to_second(since))))
    });
    funcs.add("duration", 1, false, |args| {
        let seconds = match arg(args, 0) {
            Value::String(s) => crate::conv::parse_int(&s, 10).unwrap_or(0),
            Value::Int64(n) => n,
            _ => 0,
        };
        Ok(Value::from(format_duration(
            i128::from(seconds) * NANOS_PER_SECOND,
        )))
    });
    funcs.add("durationRound", 1, false, |args| {
        let nanos = match arg(args, 0) {
            Value::String(s) => parse_duration(&s).unwrap_or(0),
            Value::Int64(n) => i128::from(n),
            Value::Object(o) => match GoTime::from_object(o.as_ref()) {
                Some(t) => GoTime::now().nanos_since(&t),
                None => 0,
            },
            _ => 0,
        };
        Ok(Value::from(round_duration(nanos)))
    });
    funcs.add("toDate", 2, false, |args| {
        let (layout, text) = (arg_str(args, 0)?, arg_str(args, 1)?);
        Ok(parse_time(layout, text)
            .unwrap_or_else(|_| GoTime::zero())
            .into_value())
    });
    funcs.add("mustToDate", 2, false, |args| {
        let (layout, text) = (arg_str(args, 0)?, arg_str(args, 1)?);
        parse_time(layout, text)
            .map(GoTime::into_value)
            .map_err(FuncError::new)
    });
    funcs.add("unixEpoch", 1, false, |args| {
        Ok(Value::from(arg_time(args, 0)?.seconds.to_string()))
    });
}

/// A `time.Time` parameter.
fn arg_time(args: &[Value], i: usize) -> Result<GoTime, FuncError> {
    let value = arg(args, i);
    match &value {
        Value::Object(o) => {
            GoTime::from_object(o.as_ref()).ok_or_else(|| wrong_type("time.Time", &value))
        }
        _ => Err(wrong_type("time.Time", &value)),
    }
}

/// Sprig's date argument: a time, or Unix seconds as `int`/`int64`; anything else is now.
fn time_or_now(value: &Value) -> GoTime {
    match value {
        Value::Object(o) => GoTime::from_object(o.as_ref()).unwrap_or_else(GoTime::now),
        Value::Int(n) | Value::Int64(n) => GoTime::from_unix(*n, 0),
        _ => GoTime::now(),
    }
}

fn date_in_zone(layout: &str, date: &Value, _zone: &str) -> String {
    // Without a zone database every location, Local included, resolves to UTC.
    time_or_now(date).utc().format(layout)
}

/// A Go `time.Time`: an instant, the zone it is shown in, and (for `now`) a monotonic reading.
#[derive(Clone, Debug)]
pub struct GoTime {
    seconds: i64,
    nanos: u32,
    offset: i32,
    zone: String,
    monotonic: Option<i128>,
}

fn process_start() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

impl GoTime {
    fn now() -> GoTime {
        let start = process_start();
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        GoTime {
            seconds: since_epoch.as_secs() as i64,
            nanos: since_epoch.subsec_nanos(),
            offset: 0,
            zone: "UTC".into(),
            monotonic: Some(start.elapsed().as_nanos() as i128 + 1),
        }
    }

    fn zero() -> GoTime {
        GoTime::from_unix(ZERO_TIME_UNIX, 0)
    }

    fn from_unix(seconds: i64, nanos: u32) -> GoTime {
        GoTime {
            seconds,
            nanos,
            offset: 0,
            zone: "UTC".into(),
            monotonic: None,
        }
    }

    fn utc(&self) -> GoTime {
        GoTime {
            offset: 0,
            zone: "UTC".into(),
            ..self.clone()
        }
    }

    fn total_nanos(&self) -> i128 {
        i128::from(self.seconds) * NANOS_PER_SECOND + i128::from(self.nanos)
    }

    fn nanos_since(&self, earlier: &GoTime) -> i128 {
        self.total_nanos() - earlier.total_nanos()
    }

    fn add(&self, nanos: i128) -> GoTime {
        let total = self.total_nanos() + nanos;
        GoTime {
            seconds: total.div_euclid(NANOS_PER_SECOND) as i64,
            nanos: total.rem_euclid(NANOS_PER_SECOND) as u32,
            monotonic: self.monotonic.map(|m| m + nanos),
            ..self.clone()
        }
    }

    fn into_value(self) -> Value {
        Value::Object(Rc::new(self))
    }

    /// Recover a time from an object this module made (through its Go methods).
    fn from_object(object: &dyn Object) -> Option<GoTime> {
        if object.type_name() != "time.Time" {
            return None;
        }
        let int = |name: &str| object.call_method(name, &[]).ok().and_then(|v| v.as_int());
        let seconds = int("Unix")?;
        let nanos = int("Nanosecond")? as u32;
        let offset = int("ZoneOffset").unwrap_or(0) as i32;
        let zone = object
            .call_method("ZoneName", &[])
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "UTC".into());
        Some(GoTime {
            seconds,
            nanos,
            offset,
            zone,
            monotonic: None,
        })
    }

    /// Local wall-clock fields: (year, month, day, hour, minute, second, weekday, yearday).
    fn fields(&self) -> Fields {
        let local = self.seconds + i64::from(self.offset);
        let days = local.div_euclid(86_400);
        let secs = local.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        Fields {
            year,
            month,
            day,
            hour: secs / 3600,
            minute: secs % 3600 / 60,
            second: secs % 60,
            weekday: (days + 4).rem_euclid(7),
            yearday: days - days_from_civil(year, 1, 1) + 1,
            nanos: self.nanos,
        }
    }

    /// Go's `Time.String`.
    fn go_string(&self) -> String {
        let mut out = self.format("2006-01-02 15:04:05.999999999 -0700 MST");
        if let Some(m) = self.monotonic {
            let sign = if m < 0 { '-' } else { '+' };
            let m = m.abs();
            out.push_str(&format!(
                " m={sign}{}.{:09}",
                m / NANOS_PER_SECOND,
                m % NANOS_PER_SECOND
            ));
        }
        out
    }

    /// `Time.Format`.
    pub fn format(&self, layout: &str) -> String {
        let f = self.fields();
        let mut out = String::new();
        let mut rest = layout;
        while !rest.is_empty() {
            let (prefix, chunk, after) = next_chunk(rest);
            out.push_str(prefix);
            rest = after;
            let Some(chunk) = chunk else { break };
            self.format_chunk(&mut out, &f, chunk);
        }
        out
    }

    fn format_chunk(&self, out: &mut String, f: &Fields, chunk: Chunk) {
        let hour12 = if f.hour % 12 == 0 { 12 } else { f.hour % 12 };
        match chunk {
            Chunk::Year => out.push_str(&format!("{:02}", f.year.rem_euclid(100))),
            Chunk::LongYear => out.push_str(&format!("{:04}", f.year)),
            Chunk::Month => out.push_str(&MONTHS[(f.month - 1) as usize][..3]),
            Chunk::LongMonth => out.push_str(MONTHS[(f.month - 1) as usize]),
            Chunk::NumMonth => out.push_str(&f.month.to_string()),
            Chunk::ZeroMonth => out.push_str(&format!("{:02}", f.month)),
            Chunk::WeekDay => out.push_str(&DAYS[f.weekday as usize][..3]),
            Chunk::LongWeekDay => out.push_str(DAYS[f.weekday as usize]),
            Chunk::Day => out.push_str(&f.day.to_string()),
            Chunk::UnderDay => out.push_str(&format!("{:>2}", f.day)),
            Chunk::ZeroDay => out.push_str(&format!("{:02}", f.day)),
            Chunk::UnderYearDay => out.push_str(&format!("{:>3}", f.yearday)),
            Chunk::ZeroYearDay => out.push_str(&format!("{:03}", f.yearday)),
            Chunk::Hour => out.push_str(&format!("{:02}", f.hour)),
            Chunk::Hour12 => out.push_str(&hour12.to_string()),
            Chunk::ZeroHour12 => out.push_str(&format!("{hour12:02}")),
            Chunk::Minute => out.push_str(&f.minute.to_string()),
            Chunk::ZeroMinute => out.push_str(&format!("{:02}", f.minute)),
            Chunk::Second => out.push_str(&f.second.to_string()),
            Chunk::ZeroSecond => out.push_str(&format!("{:02}", f.second)),
            Chunk::Pm => out.push_str(if f.hour >= 12 { "PM" } else { "AM" }),
            Chunk::LowerPm => out.push_str(if f.hour >= 12 { "pm" } else { "am" }),
            Chunk::Offset {
                iso,
                colons,
                minutes,
                seconds,
            } => {
                if iso && self.offset == 0 {
                    out.push('Z');
                    return;
                }
                let total = self.offset;
                out.push(if total < 0 { '-' } else { '+' });
                let abs = total.abs();
                out.push_str(&format!("{:02}", abs / 3600));
                if minutes {
                    if colons {
                        out.push(':');
                    }
                    out.push_str(&format!("{:02}", abs % 3600 / 60));
                }
                if seconds {
                    if colons {
                        out.push(':');
                    }
                    out.push_str(&format!("{:02}", abs % 60));
                }
            }
            Chunk::ZoneName => {
                if !self.zone.is_empty() {
                    out.push_str(&self.zone);
                } else {
                    let minutes = self.offset / 60;
                    out.push(if minutes < 0 { '-' } else { '+' });
                    out.push_str(&format!(
                        "{:02}{:02}",
                        minutes.abs() / 60,
                        minutes.abs() % 60
                    ));
                }
            }
            Chunk::Fraction {
                separator,
                digits,
                trim,
            } => {
                let text = format!("{:09}", f.nanos);
                let mut digits_text = text[..digits.min(9)].to_owned();
                if trim {
                    digits_text = digits_text.trim_end_matches('0').to_owned();
                    if digits_text.is_empty() {
                        return;
                    }
                }
                out.push(separator);
                out.push_str(&digits_text);
            }
        }
    }
}

struct Fields {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    weekday: i64,
    yearday: i64,
    nanos: u32,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

impl Object for GoTime {
    fn type_name(&self) -> String {
        "time.Time".into()
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn has_method(&self, name: &str) -> bool {
        matches!(
            name,
            "Unix"
                | "UnixMilli"
                | "UnixMicro"
                | "UnixNano"
                | "Year"
                | "Month"
                | "Day"
                | "Hour"
                | "Minute"
                | "Second"
                | "Nanosecond"
                | "YearDay"
                | "Weekday"
                | "Format"
                | "UTC"
                | "Local"
                | "String"
                | "IsZero"
        )
    }
    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        let f = self.fields();
        let nanos = self.total_nanos();
        Ok(match name {
            "Unix" => Value::Int64(self.seconds),
            "UnixMilli" => Value::Int64((nanos / 1_000_000) as i64),
            "UnixMicro" => Value::Int64((nanos / 1_000) as i64),
            "UnixNano" => Value::Int64(nanos as i64),
            "Year" => Value::Int(f.year),
            "Month" => Value::from(MONTHS[(f.month - 1) as usize]),
            "Day" => Value::Int(f.day),
            "Hour" => Value::Int(f.hour),
            "Minute" => Value::Int(f.minute),
            "Second" => Value::Int(f.second),
            "Nanosecond" => Value::Int(i64::from(self.nanos)),
            "YearDay" => Value::Int(f.yearday),
            "Weekday" => Value::from(DAYS[f.weekday as usize]),
            "Format" => match args.first() {
                Some(Value::String(layout)) => Value::from(self.format(layout)),
                _ => return Err("wrong type for value; expected string".into()),
            },
            "UTC" | "Local" => GoTime {
                monotonic: None,
                ..self.utc()
            }
            .into_value(),
            "String" => Value::from(self.go_string()),
            "IsZero" => Value::Bool(self.seconds == ZERO_TIME_UNIX && self.nanos == 0),
            // Not Go methods: how this module reads back a time it made.
            "ZoneOffset" => Value::Int64(i64::from(self.offset)),
            "ZoneName" => Value::from(self.zone.as_str()),
            other => return Err(format!("can't call method {other}")),
        })
    }
    fn format(&self) -> String {
        self.go_string()
    }
    fn to_data(&self) -> Value {
        Value::from(self.format("2006-01-02T15:04:05.999999999Z07:00"))
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if month <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        month,
        day,
    )
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// An element of a Go layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chunk {
    Year,
    LongYear,
    Month,
    LongMonth,
    NumMonth,
    ZeroMonth,
    WeekDay,
    LongWeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    Pm,
    LowerPm,
    Offset {
        iso: bool,
        colons: bool,
        minutes: bool,
        seconds: bool,
    },
    ZoneName,
    Fraction {
        separator: char,
        digits: usize,
        trim: bool,
    },
}

fn starts_with_lower(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
}

/// Go's `nextStdChunk`: the literal text before the next layout element, the element, and
/// the rest.
fn next_chunk(layout: &str) -> (&str, Option<Chunk>, &str) {
    let bytes = layout.as_bytes();
    for i in 0..bytes.len() {
        let rest = &layout[i..];
        let found = |len: usize, chunk: Chunk| Some((len, chunk));
        let hit = match bytes[i] {
            b'J' if rest.starts_with("January") => found(7, Chunk::LongMonth),
            b'J' if rest.starts_with("Jan") && !starts_with_lower(&rest[3..]) => {
                found(3, Chunk::Month)
            }
            b'M' if rest.starts_with("Monday") => found(6, Chunk::LongWeekDay),
            b'M' if rest.starts_with("Mon") && !starts_with_lower(&rest[3..]) => {
                found(3, Chunk::WeekDay)
            }
            b'M' if rest.starts_with("MST") => found(3, Chunk::ZoneName),
            b'0' if rest.starts_with("002") => found(3, Chunk::ZeroYearDay),
            b'0' => match bytes.get(i + 1) {
                Some(b'1') => found(2, Chunk::ZeroMonth),
                Some(b'2') => found(2, Chunk::ZeroDay),
                Some(b'3') => found(2, Chunk::ZeroHour12),
                Some(b'4') => found(2, Chunk::ZeroMinute),
                Some(b'5') => found(2, Chunk::ZeroSecond),
                Some(b'6') => found(2, Chunk::Year),
                _ => None,
            },
            b'1' if rest.starts_with("15") => found(2, Chunk::Hour),
            b'1' => found(1, Chunk::NumMonth),
            b'2' if rest.starts_with("2006") => found(4, Chunk::LongYear),
            b'2' => found(1, Chunk::Day),
            b'_' if rest.starts_with("_2006") => {
                return (&layout[..i + 1], Some(Chunk::LongYear), &layout[i + 5..]);
            }
            b'_' if rest.starts_with("_2") => found(2, Chunk::UnderDay),
            b'_' if rest.starts_with("__2") => found(3, Chunk::UnderYearDay),
            b'3' => found(1, Chunk::Hour12),
            b'4' => found(1, Chunk::Minute),
            b'5' => found(1, Chunk::Second),
            b'P' if rest.starts_with("PM") => found(2, Chunk::Pm),
            b'p' if rest.starts_with("pm") => found(2, Chunk::LowerPm),
            b'-' | b'Z' => {
                let iso = bytes[i] == b'Z';
                let body = &rest[1..];
                let offset = |colons, minutes, seconds| Chunk::Offset {
                    iso,
                    colons,
                    minutes,
                    seconds,
                };
                if body.starts_with("070000") {
                    found(7, offset(false, true, true))
                } else if body.starts_with("07:00:00") {
                    found(9, offset(true, true, true))
                } else if body.starts_with("0700") {
                    found(5, offset(false, true, false))
                } else if body.starts_with("07:00") {
                    found(6, offset(true, true, false))
                } else if body.starts_with("07") {
                    found(3, offset(false, false, false))
                } else {
                    None
                }
            }
            b'.' | b',' if matches!(bytes.get(i + 1), Some(b'0' | b'9')) => {
                let digit = bytes[i + 1];
                let run = bytes[i + 1..].iter().take_while(|b| **b == digit).count();
                if bytes.get(i + 1 + run).is_some_and(u8::is_ascii_digit) {
                    None
                } else {
                    let chunk = Chunk::Fraction {
                        separator: char::from(bytes[i]),
                        digits: run,
                        trim: digit == b'9',
                    };
                    found(1 + run, chunk)
                }
            }
            _ => None,
        };
        if let Some((len, chunk)) = hit {
            return (&layout[..i], Some(chunk), &layout[i + len..]);
        }
    }
    (layout, None, "")
}

/// Go's `time.ParseInLocation` with `Local` (UTC here).
fn parse_time(layout: &str, value: &str) -> Result<GoTime, String> {
    let original = value;
    let bad = |value: &str, element: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(original),
            quote(layout),
            quote(value),
            quote(element)
        )
    };
    let (mut year, mut month, mut day) = (1i64, 1i64, 1i64);
    let (mut hour, mut minute, mut second, mut nanos) = (0i64, 0i64, 0i64, 0u32);
    let (mut pm, mut am) = (false, false);
    let mut offset: Option<i32> = None;
    let mut zone_name: Option<String> = None;
    let mut range_error: Option<&str> = None;
    let mut rest_layout = layout;
    let mut value = value;
    loop {
        let (prefix, chunk, after) = next_chunk(rest_layout);
        let element = &rest_layout[prefix.len()..rest_layout.len() - after.len()];
        value = skip_literal(value, prefix).ok_or_else(|| bad(value, prefix))?;
        let Some(chunk) = chunk else {
            if !value.is_empty() {
                return Err(format!(
                    "parsing time {}: extra text: {}",
                    quote(original),
                    quote(value)
                ));
            }
            break;
        };
        rest_layout = after;
        let before = value;
        let mut fail = || bad(before, element);
        match chunk {
            Chunk::Year => {
                let n = take_digits(value, 2, 2).ok_or_else(&mut fail)?;
                year = if n >= 69 { n + 1900 } else { n + 2000 };
                value = &value[2..];
            }
            Chunk::LongYear => {
                year = take_digits(value, 4, 4).ok_or_else(&mut fail)?;
                value = &value[4..];
            }
            Chunk::Month | Chunk::LongMonth => {
                let names: Vec<&str> = if chunk == Chunk::Month {
                    MONTHS.iter().map(|m| &m[..3]).collect()
                } else {
                    MONTHS.to_vec()
                };
                let (index, len) = lookup_name(value, &names).ok_or_else(&mut fail)?;
                month = index as i64 + 1;
                value = &value[len..];
            }
            Chunk::WeekDay | Chunk::LongWeekDay => {
                let names: Vec<&str> = if chunk == Chunk::WeekDay {
                    DAYS.iter().map(|d| &d[..3]).collect()
                } else {
                    DAYS.to_vec()
                };
                let (_, len) = lookup_name(value, &names).ok_or_else(&mut fail)?;
                value = &value[len..];
            }
            Chunk::NumMonth | Chunk::ZeroMonth => {
                let (n, len) =
                    get_number(value, chunk == Chunk::ZeroMonth).ok_or_else(&mut fail)?;
                if !(1..=12).contains(&n) {
                    range_error = Some("month");
                }
                month = n;
                value = &value[len..];
            }
            Chunk::Day | Chunk::UnderDay | Chunk::ZeroDay => {
                if chunk == Chunk::UnderDay && value.starts_with(' ') {
                    value = &value[1..];
                }
                let (n, len) = get_number(value, chunk == Chunk::ZeroDay).ok_or_else(&mut fail)?;
                day = n;
                value = &value[len..];
            }
            Chunk::UnderYearDay | Chunk::ZeroYearDay => {
                let trimmed = if chunk == Chunk::UnderYearDay {
                    value.trim_start_matches(' ')
                } else {
                    value
                };
                let n = take_digits(trimmed, 3, 3).ok_or_else(&mut fail)?;
                let _ = n;
                value = &trimmed[3..];
            }
            Chunk::Hour => {
                let (n, len) = get_number(value, false).ok_or_else(&mut fail)?;
                if !(0..24).contains(&n) {
                    range_error = Some("hour");
                }
                hour = n;
                value = &value[len..];
            }
            Chunk::Hour12 | Chunk::ZeroHour12 => {
                let (n, len) =
                    get_number(value, chunk == Chunk::ZeroHour12).ok_or_else(&mut fail)?;
                if !(0..=12).contains(&n) {
                    range_error = Some("hour");
                }
                hour = n;
                value = &value[len..];
            }
            Chunk::Minute | Chunk::ZeroMinute => {
                let (n, len) =
                    get_number(value, chunk == Chunk::ZeroMinute).ok_or_else(&mut fail)?;
                if !(0..60).contains(&n) {
                    range_error = Some("minute");
                }
                minute = n;
                value = &value[len..];
            }
            Chunk::Second | Chunk::ZeroSecond => {
                let (n, len) =
                    get_number(value, chunk == Chunk::ZeroSecond).ok_or_else(&mut fail)?;
                if !(0..60).contains(&n) {
                    range_error = Some("second");
                }
                second = n;
                value = &value[len..];
                // A fraction in the value that the layout does not mention is accepted.
                let next_is_fraction = matches!(
                    next_chunk(rest_layout),
                    ("", Some(Chunk::Fraction { .. }), _)
                );
                let bytes = value.as_bytes();
                if !next_is_fraction
                    && bytes.len() >= 2
                    && (bytes[0] == b'.' || bytes[0] == b',')
                    && bytes[1].is_ascii_digit()
                {
                    let digits = bytes[1..].iter().take_while(|b| b.is_ascii_digit()).count();
                    nanos = fraction_nanos(&value[1..1 + digits]);
                    value = &value[1 + digits..];
                }
            }
            Chunk::Pm | Chunk::LowerPm => {
                let (p, a) = if chunk == Chunk::Pm {
                    ("PM", "AM")
                } else {
                    ("pm", "am")
                };
                if value.starts_with(p) {
                    pm = true;
                } else if value.starts_with(a) {
                    am = true;
                } else {
                    return Err(fail());
                }
                value = &value[2..];
            }
            Chunk::Offset {
                iso,
                colons,
                minutes,
                seconds,
            } => {
                if iso && value.starts_with('Z') {
                    value = &value[1..];
                    offset = Some(0);
                    zone_name = Some("UTC".into());
                    continue;
                }
                let (parsed, len) =
                    parse_offset(value, colons, minutes, seconds).ok_or_else(&mut fail)?;
                offset = Some(parsed);
                value = &value[len..];
            }
            Chunk::ZoneName => {
                if value.starts_with("UTC") {
                    offset = Some(0);
                    zone_name = Some("UTC".into());
                    value = &value[3..];
                    continue;
                }
                let len = value.bytes().take_while(u8::is_ascii_uppercase).count();
                if !(3..=5).contains(&len) {
                    return Err(fail());
                }
                zone_name = Some(value[..len].to_owned());
                value = &value[len..];
            }
            Chunk::Fraction { digits, trim, .. } => {
                let bytes = value.as_bytes();
                if trim {
                    if bytes.len() < 2
                        || !(bytes[0] == b'.' || bytes[0] == b',')
                        || !bytes[1].is_ascii_digit()
                    {
                        continue;
                    }
                    let count = bytes[1..].iter().take_while(|b| b.is_ascii_digit()).count();
                    nanos = fraction_nanos(&value[1..1 + count]);
                    value = &value[1 + count..];
                } else {
                    if bytes.len() < digits + 1
                        || !(bytes[0] == b'.' || bytes[0] == b',')
                        || !bytes[1..=digits].iter().all(u8::is_ascii_digit)
                    {
                        return Err(fail());
                    }
                    nanos = fraction_nanos(&value[1..=digits]);
                    value = &value[1 + digits..];
                }
            }
        }
    }
    if let Some(what) = range_error {
        return Err(format!(
            "parsing time {}: {what} out of range",
            quote(original)
        ));
    }
    if pm && hour < 12 {
        hour += 12;
    } else if am && hour == 12 {
        hour = 0;
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err(format!(
            "parsing time {}: day out of range",
            quote(original)
        ));
    }
    let local_seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    let offset_seconds = offset.unwrap_or(0);
    let zone = match (&zone_name, offset) {
        (Some(name), _) => name.clone(),
        (None, Some(_)) => String::new(),
        (None, None) => "UTC".into(),
    };
    Ok(GoTime {
        seconds: local_seconds - i64::from(offset_seconds),
        nanos,
        offset: offset_seconds,
        zone,
        monotonic: None,
    })
}

/// Go's layout literal matching: spaces in the layout match one or more spaces.
fn skip_literal<'a>(mut value: &'a str, mut prefix: &str) -> Option<&'a str> {
    while let Some(c) = prefix.chars().next() {
        if c == ' ' {
            if !value.is_empty() && !value.starts_with(' ') {
                return None;
            }
            prefix = prefix.trim_start_matches(' ');
            value = value.trim_start_matches(' ');
            continue;
        }
        if !value.starts_with(c) {
            return None;
        }
        prefix = &prefix[c.len_utf8()..];
        value = &value[c.len_utf8()..];
    }
    Some(value)
}

fn take_digits(value: &str, min: usize, max: usize) -> Option<i64> {
    let count = value
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count()
        .min(max);
    if count < min {
        return None;
    }
    value[..count].parse().ok()
}

/// Go's `getnum`: one or two digits (exactly two when `fixed`).
fn get_number(value: &str, fixed: bool) -> Option<(i64, usize)> {
    let bytes = value.as_bytes();
    if !bytes.first()?.is_ascii_digit() {
        return None;
    }
    if !bytes.get(1).is_some_and(u8::is_ascii_digit) {
        if fixed {
            return None;
        }
        return Some((i64::from(bytes[0] - b'0'), 1));
    }
    Some((
        i64::from(bytes[0] - b'0') * 10 + i64::from(bytes[1] - b'0'),
        2,
    ))
}

/// Case-insensitive name lookup: the index and the matched length.
fn lookup_name(value: &str, names: &[&str]) -> Option<(usize, usize)> {
    names.iter().enumerate().find_map(|(i, name)| {
        let candidate = value.get(..name.len())?;
        candidate
            .eq_ignore_ascii_case(name)
            .then_some((i, name.len()))
    })
}

fn fraction_nanos(digits: &str) -> u32 {
    let mut padded: String = digits.chars().take(9).collect();
    while padded.len() < 9 {
        padded.push('0');
    }
    padded.parse().unwrap_or(0)
}

fn parse_offset(value: &str, colons: bool, minutes: bool, seconds: bool) -> Option<(i32, usize)> {
    let bytes = value.as_bytes();
    let sign = match bytes.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let mut pos = 1;
    let read_pair = |pos: &mut usize, colon: bool| -> Option<i32> {
        if colon {
            if bytes.get(*pos) != Some(&b':') {
                return None;
            }
            *pos += 1;
        }
        let pair = value.get(*pos..*pos + 2)?;
        if !pair.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *pos += 2;
        pair.parse().ok()
    };
    let hours = read_pair(&mut pos, false)?;
    let mins = if minutes {
        read_pair(&mut pos, colons)?
    } else {
        0
    };
    let secs = if seconds {
        read_pair(&mut pos, colons)?
    } else {
        0
    };
    Some((sign * (hours * 3600 + mins * 60 + secs), pos))
}

/// Go's `time.ParseDuration`, in nanoseconds.
fn parse_duration(text: &str) -> Result<i128, String> {
    let invalid = || format!("time: invalid duration {}", quote(text));
    let mut s = text;
    let negative = s.starts_with('-');
    if s.starts_with('-') || s.starts_with('+') {
        s = &s[1..];
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: i128 = 0;
    while !s.is_empty() {
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let integer = &s[..int_len];
        s = &s[int_len..];
        let mut fraction = "";
        if let Some(after_dot) = s.strip_prefix('.') {
            let frac_len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
            fraction = &after_dot[..frac_len];
            s = &after_dot[frac_len..];
        }
        if integer.is_empty() && fraction.is_empty() {
            return Err(invalid());
        }
        let unit_len = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", quote(text)));
        }
        let unit = &s[..unit_len];
        s = &s[unit_len..];
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    quote(unit),
                    quote(text)
                ));
            }
        };
        let whole: i128 = if integer.is_empty() {
            0
        } else {
            integer.parse().map_err(|_| invalid())?
        };
        let mut value = whole.checked_mul(scale).ok_or_else(invalid)?;
        if !fraction.is_empty() {
            let digits: i128 = fraction
                .chars()
                .take(30)
                .collect::<String>()
                .parse()
                .map_err(|_| invalid())?;
            let denominator = 10i128.pow(fraction.len().min(30) as u32);
            value += digits * scale / denominator;
        }
        total += value;
        if total > i128::from(i64::MAX) + i128::from(negative) {
            return Err(invalid());
        }
    }
    Ok(if negative { -total } else { total })
}

/// `Duration.Round(time.Second)`: half away from zero.
fn round_to_second(nanos: i128) -> i128 {
    let rem = nanos % NANOS_PER_SECOND;
    let base = nanos - rem;
    if rem.abs() * 2 >= NANOS_PER_SECOND {
        base + rem.signum() * NANOS_PER_SECOND
    } else {
        base
    }
}

/// Go's `Duration.String` (`1h2m3.5s`, `150ms`, `0s`).
pub fn format_duration(nanos: i128) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let negative = nanos < 0;
    let u = nanos.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        let (unit, precision) = if u < 1_000 {
            ("ns", 0)
        } else if u < 1_000_000 {
            ("µs", 3)
        } else {
            ("ms", 6)
        };
        out.push_str(&fraction_text(u, precision));
        out.push_str(unit);
    } else {
        let seconds_part = fraction_text(u % 60_000_000_000, 9);
        let minutes_total = u / 60_000_000_000;
        if minutes_total > 0 {
            let hours = minutes_total / 60;
            if hours > 0 {
                out.push_str(&format!("{hours}h"));
            }
            out.push_str(&format!("{}m", minutes_total % 60));
        }
        out.push_str(&seconds_part);
        out.push('s');
    }
    if negative { format!("-{out}") } else { out }
}

/// `value / 10^precision` with the fraction's trailing zeros dropped.
fn fraction_text(value: u128, precision: u32) -> String {
    let scale = 10u128.pow(precision);
    let (whole, fraction) = (value / scale, value % scale);
    if fraction == 0 {
        return whole.to_string();
    }
    let digits = format!("{fraction:0width$}", width = precision as usize);
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// Sprig's `durationRound`: the largest whole unit (y, mo, d, h, m, s) the duration exceeds.
fn round_duration(nanos: i128) -> String {
    let u = nanos.unsigned_abs();
    let second = 1_000_000_000u128;
    let (minute, hour) = (60 * second, 3600 * second);
    let day = 24 * hour;
    let (month, year) = (30 * day, 365 * day);
    for (size, suffix) in [
        (year, "y"),
        (month, "mo"),
        (day, "d"),
        (hour, "h"),
        (minute, "m"),
        (second, "s"),
    ] {
        if u > size {
            return format!("{}{suffix}", u / size);
        }
    }
    "0s".into()
}

#[cfg(test)]
mod tests {
    use super::{GoTime, format_duration, parse_duration, parse_time};
    use crate::testing::*;
    use capstan_gotmpl::value::Value;

    fn time(unix: i64) -> Value {
        GoTime::from_unix(unix, 0).into_value()
    }

    #[test]
    fn formatting_with_go_layouts() {
        // 2009-11-10 23:00:00 UTC (the Go playground's time), Tuesday.
        let t = GoTime::from_unix(1_257_894_000, 123_456_789);
        assert_eq!(t.format("2006-01-02"), "2009-11-10");
        assert_eq!(
            t.format("Mon Jan _2 15:04:05 2006"),
            "Tue Nov 10 23:00:00 2009"
        );
        assert_eq!(
            t.format("Monday, 02-Jan-06 15:04:05 MST"),
            "Tuesday, 10-Nov-09 23:00:00 UTC"
        );
        assert_eq!(t.format("3:04PM"), "11:00PM");
        assert_eq!(
            t.format("2006-01-02T15:04:05Z07:00"),
            "2009-11-10T23:00:00Z"
        );
        assert_eq!(
            t.format("2006-01-02T15:04:05.000-0700"),
            "2009-11-10T23:00:00.123+0000"
        );
        assert_eq!(t.format("15:04:05.999999999"), "23:00:00.123456789");
        assert_eq!(t.format("January 2, 2006 002"), "November 10, 2009 314");
        assert_eq!(GoTime::zero().go_string(), "0001-01-01 00:00:00 +0000 UTC");
        assert_eq!(show("date", &[s("2006-01-02"), i(0)]), "1970-01-01");
        assert_eq!(show("htmlDate", &[Value::Int64(86_400)]), "1970-01-02");
        assert_eq!(
            show("dateInZone", &[s("15:04 MST"), i(3600), s("UTC")]),
            "01:00 UTC"
        );
        assert_eq!(show("unixEpoch", &[time(1_257_894_000)]), "1257894000");
        // `date` with a number that is neither int nor int64 formats the current time.
        assert_eq!(show("date", &[s("2006"), f(0.0)]).len(), 4);
    }

    #[test]
    fn parsing_with_go_layouts() {
        let t = parse_time("2006-01-02", "2017-12-31").unwrap();
        assert_eq!(t.go_string(), "2017-12-31 00:00:00 +0000 UTC");
        let t = parse_time("2006-01-02T15:04:05Z07:00", "2021-03-04T05:06:07+02:00").unwrap();
        assert_eq!(t.go_string(), "2021-03-04 05:06:07 +0200 +0200");
        assert_eq!(t.seconds, 1_614_827_167);
        let t = parse_time("Jan 2 2006 3:04PM", "feb 3 2020 1:05pm");
        assert!(t.is_err());
        let t = parse_time("Jan 2 2006 3:04PM", "Feb 3 2020 1:05PM").unwrap();
        assert_eq!(t.format("2006-01-02 15:04"), "2020-02-03 13:05");
        assert_eq!(
            parse_time("2006-01-02", "2017-13-01").unwrap_err(),
            "parsing time \"2017-13-01\": month out of range"
        );
        assert_eq!(
            parse_time("2006-01-02", "2017-02-30").unwrap_err(),
            "parsing time \"2017-02-30\": day out of range"
        );
        assert_eq!(
            error("mustToDate", &[s("2006-01-02"), s("x")]),
            "parsing time \"x\" as \"2006-01-02\": cannot parse \"x\" as \"2006\""
        );
        assert_eq!(
            parse_time("2006-01-02", "2017-01-01 x").unwrap_err(),
            "parsing time \"2017-01-01 x\": extra text: \" x\""
        );
        assert_eq!(
            show("toDate", &[s("2006-01-02"), s("bad")]),
            "0001-01-01 00:00:00 +0000 UTC"
        );
        assert_eq!(
            show(
                "toDate",
                &[s("2006-01-02 15:04:05"), s("2020-01-02 03:04:05.5")]
            ),
            "2020-01-02 03:04:05.5 +0000 UTC"
        );
    }

    #[test]
    fn durations_like_go() {
        // Go's time package: Duration.String and ParseDuration examples.
        for (nanos, text) in [
            (0, "0s"),
            (1, "1ns"),
            (1_100, "1.1µs"),
            (2_200_000, "2.2ms"),
            (3_300_000_000, "3.3s"),
            (4 * 60_000_000_000 + 5_000_000_000, "4m5s"),
            (4 * 60_000_000_000 + 5_001_000_000, "4m5.001s"),
            (
                5 * 3_600_000_000_000 + 6 * 60_000_000_000 + 7_001_000_000,
                "5h6m7.001s",
            ),
            (8 * 60_000_000_000 + 1, "8m0.000000001s"),
            (-1_500_000_000, "-1.5s"),
            (3_600_000_000_000, "1h0m0s"),
        ] {
            assert_eq!(format_duration(nanos), text);
        }
        assert_eq!(
            parse_duration("1h15m30.918273645s").unwrap(),
            4_530_918_273_645
        );
        assert_eq!(parse_duration("-1.5h").unwrap(), -5_400_000_000_000);
        assert_eq!(parse_duration("300ms").unwrap(), 300_000_000);
        assert_eq!(
            parse_duration("x").unwrap_err(),
            "time: invalid duration \"x\""
        );
        assert_eq!(
            parse_duration("1").unwrap_err(),
            "time: missing unit in duration \"1\""
        );
        assert_eq!(
            parse_duration("1x").unwrap_err(),
            "time: unknown unit \"x\" in duration \"1x\""
        );
        // Sprig: duration takes seconds as int64 or string; a Go int gives 0s.
        assert_eq!(show("duration", &[s("95")]), "1m35s");
        assert_eq!(show("duration", &[Value::Int64(3600)]), "1h0m0s");
        assert_eq!(show("duration", &[i(95)]), "0s");
        // Sprig date_test.go durationRound cases, then the rule's boundaries (strictly more
        // than a unit is needed to use it).
        assert_eq!(show("durationRound", &[s("2h5s")]), "2h");
        assert_eq!(show("durationRound", &[s("24h5s")]), "1d");
        assert_eq!(show("durationRound", &[s("2400h5s")]), "3mo");
        assert_eq!(show("durationRound", &[s("-2h5s")]), "2h");
        assert_eq!(show("durationRound", &[s("3600s")]), "60m");
        assert_eq!(show("durationRound", &[s("3601s")]), "1h");
        assert_eq!(show("durationRound", &[s("8760h1s")]), "1y");
        assert_eq!(show("durationRound", &[Value::Int64(1_000_000_001)]), "1s");
        assert_eq!(show("durationRound", &[i(5)]), "0s");
    }

    #[test]
    fn time_objects() {
        let modified = call("dateModify", &[s("1h30m"), time(0)]).unwrap();
        assert_eq!(modified.to_go_string(), "1970-01-01 01:30:00 +0000 UTC");
        let unchanged = call("dateModify", &[s("bad"), time(0)]).unwrap();
        assert_eq!(unchanged.to_go_string(), "1970-01-01 00:00:00 +0000 UTC");
        assert_eq!(
            error("mustDateModify", &[s("bad"), time(0)]),
            "time: invalid duration \"bad\""
        );
        assert_eq!(
            error("dateModify", &[s("1h"), s("2020")]),
            "wrong type for value; expected time.Time; got string"
        );
        let now = call("now", &[]).unwrap();
        assert!(now.to_go_string().contains(" +0000 UTC m=+"), "{now:?}");
        assert_eq!(show("ago", &[now]), "0s");
        let Value::Object(t) = time(1_257_894_000) else {
            panic!()
        };
        assert_eq!(t.to_data().to_go_string(), "2009-11-10T23:00:00Z");
        assert_eq!(t.call_method("Year", &[]).unwrap().to_go_string(), "2009");
        assert_eq!(
            t.call_method("Format", &[s("Jan")]).unwrap().to_go_string(),
            "Nov"
        );
    }
}
