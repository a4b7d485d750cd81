//! Statistics of a comparison, as Node's `benchmark/compare.R` reports them: the mean of each
//! configuration, the improvement of B over A, Welch's t-test (unequal variances) for whether the
//! difference is real, confidence stars, and the accuracy of the improvement at 95, 99 and
//! 99.9 % confidence.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Mean, sample standard deviation and count of a set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// The arithmetic mean.
    pub mean: f64,
    /// The sample standard deviation (n − 1 in the denominator); 0 for one sample.
    pub sd: f64,
    /// How many samples.
    pub n: usize,
}

impl Summary {
    /// Summarises `samples`.
    ///
    /// # Panics
    ///
    /// When `samples` is empty.
    pub fn of(samples: &[f64]) -> Self {
        assert!(!samples.is_empty(), "no samples to summarise");
        let n = samples.len();
        let mean = samples.iter().sum::<f64>() / n as f64;
        let var = if n > 1 { samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
        Self { mean, sd: var.sqrt(), n }
    }

    /// The median of `samples`.
    ///
    /// # Panics
    ///
    /// When `samples` is empty.
    pub fn median(samples: &[f64]) -> f64 {
        assert!(!samples.is_empty(), "no samples");
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        if sorted.len().is_multiple_of(2) { (sorted[mid - 1] + sorted[mid]) / 2.0 } else { sorted[mid] }
    }
}

/// The confidence levels of [`Comparison::accuracy`].
pub const LEVELS: [f64; 3] = [0.95, 0.99, 0.999];

/// B compared with A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    /// A's samples.
    pub a: Summary,
    /// B's samples.
    pub b: Summary,
    /// (mean B − mean A) / mean A, in percent.
    pub improvement: f64,
    /// Welch's t statistic of B − A.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value; 1 when the difference cannot be tested (fewer than 2 samples each, or
    /// no variance at all).
    pub p: f64,
    /// Half-width of the confidence interval of the improvement, in percent of mean A, at each
    /// of [`LEVELS`].
    pub accuracy: [f64; 3],
}

impl Comparison {
    /// Compares B's samples with A's.
    ///
    /// # Panics
    ///
    /// When either set is empty.
    pub fn welch(a: &[f64], b: &[f64]) -> Self {
        let (sa, sb) = (Summary::of(a), Summary::of(b));
        let improvement = (sb.mean - sa.mean) / sa.mean * 100.0;
        let (va, vb) = (sa.sd.powi(2) / sa.n as f64, sb.sd.powi(2) / sb.n as f64);
        let se = (va + vb).sqrt();
        let untestable = Self { a: sa, b: sb, improvement, t: f64::NAN, df: f64::NAN, p: 1.0, accuracy: [f64::NAN; 3] };
        if sa.n < 2 || sb.n < 2 || se == 0.0 || !se.is_finite() {
            return untestable;
        }
        let t = (sb.mean - sa.mean) / se;
        let df = (va + vb).powi(2) / (va.powi(2) / (sa.n - 1) as f64 + vb.powi(2) / (sb.n - 1) as f64);
        let Ok(dist) = StudentsT::new(0.0, 1.0, df) else {
            return untestable;
        };
        let p = (2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0);
        let accuracy = LEVELS.map(|level| dist.inverse_cdf(1.0 - (1.0 - level) / 2.0) * se / sa.mean.abs() * 100.0);
        Self { a: sa, b: sb, improvement, t, df, p, accuracy }
    }

    /// `***` for p < 0.001, `**` for p < 0.01, `*` for p < 0.05, else nothing: how confident the
    /// difference is not noise.
    pub fn stars(&self) -> &'static str {
        match self.p {
            p if p < 0.001 => "***",
            p if p < 0.01 => "**",
            p if p < 0.05 => "*",
            _ => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() <= want.abs() * 1e-6 + 1e-12, "got {got}, want {want}");
    }

    // Expected values from scipy 1.x: `stats.ttest_ind(b, a, equal_var=False)`, and the
    // accuracy as `stats.t.ppf(1 - (1 - level) / 2, df) * se / mean(a) * 100`.
    #[test]
    fn a_known_pair_without_a_significant_difference() {
        let c = Comparison::welch(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 6.0, 8.0, 10.0]);
        close(c.t, 1.8973665961010275);
        close(c.df, 5.882352941176472);
        close(c.p, 0.10753119493062728);
        close(c.improvement, 100.0);
        close(c.accuracy[0], 129.5913881245658);
        close(c.accuracy[1], 197.01369064243676);
        close(c.accuracy[2], 318.4488904683228);
        assert_eq!(c.stars(), "");
    }

    #[test]
    fn a_known_pair_with_three_stars() {
        let c = Comparison::welch(&[10.1, 10.2, 9.9, 10.0, 10.3], &[11.0, 11.2, 10.9, 11.1, 11.3]);
        close(c.t, 10.0);
        close(c.df, 8.0);
        close(c.p, 8.488181527628504e-06);
        close(c.improvement, 9.900990099009901);
        close(c.accuracy[0], 2.2831724110932337);
        close(c.accuracy[2], 4.9913915181915405);
        assert_eq!(c.stars(), "***");
    }

    #[test]
    fn a_known_pair_of_noise() {
        let c = Comparison::welch(&[100.0, 102.0, 98.0, 101.0, 99.0, 100.0], &[101.0, 103.0, 99.0, 100.0, 102.0, 98.0]);
        close(c.t, 0.5222329678670936);
        close(c.df, 9.307692307692307);
        close(c.p, 0.61370876985305);
        close(c.accuracy[1], 3.0856254790377533);
        assert_eq!(c.stars(), "");
    }

    #[test]
    fn stars_follow_p() {
        let with_p = |p| Comparison { p, ..Comparison::welch(&[1.0, 2.0], &[1.0, 2.0]) };
        assert_eq!(with_p(0.0009).stars(), "***");
        assert_eq!(with_p(0.009).stars(), "**");
        assert_eq!(with_p(0.049).stars(), "*");
        assert_eq!(with_p(0.05).stars(), "");
    }

    #[test]
    fn untestable_pairs_are_not_significant() {
        assert_eq!(Comparison::welch(&[1.0], &[2.0]).p, 1.0);
        assert_eq!(Comparison::welch(&[1.0, 1.0], &[2.0, 2.0]).p, 1.0);
    }

    #[test]
    fn summary_and_median() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        close(s.mean, 5.0);
        close(s.sd, 2.138089935299395);
        assert_eq!(Summary::median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(Summary::median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
