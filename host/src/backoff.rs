//! Retry delays, shared by the release loop and the source sync: doubling from a first
//! delay up to a cap, and up to a fifth more at random, so that what failed together (one
//! server down for many releases) does not retry in lockstep.

use std::time::Duration;

/// `first` doubled for each failure after the first, at most `cap`.
pub fn doubling(failures: u32, first: Duration, cap: Duration) -> Duration {
    let exponent = failures.clamp(1, 17) - 1;
    first.saturating_mul(1 << exponent).min(cap)
}

/// `delay` plus a random part of up to a fifth of it.
pub fn jittered(delay: Duration) -> Duration {
    let fifth = u64::try_from(delay.as_millis() / 5).unwrap_or(u64::MAX);
    delay + Duration::from_millis(fastrand::u64(0..fifth.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_to_the_cap_and_jitter_stays_under_a_fifth() {
        let (first, cap) = (Duration::from_secs(5), Duration::from_secs(300));
        let delays: Vec<u64> = (0..10).map(|f| doubling(f, first, cap).as_secs()).collect();
        assert_eq!(delays, [5, 5, 10, 20, 40, 80, 160, 300, 300, 300]);
        assert_eq!(
            doubling(u32::MAX, Duration::from_secs(1), Duration::from_secs(3600)),
            Duration::from_secs(3600)
        );
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let delay = jittered(Duration::from_secs(10));
            assert!(delay >= Duration::from_secs(10) && delay < Duration::from_secs(12));
            seen.insert(delay);
        }
        assert!(seen.len() > 10, "jitter varies: {seen:?}");
    }
}
