//! Percentiles of samples.

/// Sorted samples, in microseconds.
#[derive(Debug, Clone, Default)]
pub struct Samples(Vec<f64>);

impl Samples {
    /// The samples, sorted.
    pub fn new(mut values: Vec<f64>) -> Samples {
        values.sort_by(f64::total_cmp);
        Samples(values)
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The `p`-th percentile (0..=100), nearest rank; `None` without samples.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.0.is_empty() {
            return None;
        }
        let rank = (p / 100.0 * self.0.len() as f64).ceil().max(1.0);
        let i = (rank as usize).min(self.0.len()) - 1;
        self.0.get(i).copied()
    }

    /// The median.
    pub fn p50(&self) -> Option<f64> {
        self.percentile(50.0)
    }

    /// The 99th percentile.
    pub fn p99(&self) -> Option<f64> {
        self.percentile(99.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let s = Samples::new((1..=100).rev().map(f64::from).collect());
        assert_eq!(
            (s.p50(), s.p99(), s.percentile(100.0)),
            (Some(50.0), Some(99.0), Some(100.0))
        );
        assert_eq!(Samples::new(vec![7.0]).p99(), Some(7.0));
        assert_eq!(Samples::default().p50(), None);
    }
}
