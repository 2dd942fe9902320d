//! What `mino eval` prints: each case's runs, pass count, and for repeated
//! runs the pass rate with a Wilson score interval; as text for people or
//! one JSON object for machines. Computes and formats; runs nothing.

use serde::Serialize;

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval for `passed` of `runs` at 95%, as
/// `(low, high)`; `(0, 1)` for no runs.
pub fn wilson(passed: u32, runs: u32) -> (f64, f64) {
    if runs == 0 {
        return (0.0, 1.0);
    }
    let n = f64::from(runs);
    let p = f64::from(passed) / n;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// One run's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub passed: bool,
    pub stop: Option<String>,
    pub failures: Vec<String>,
}

/// One case's outcome over its runs.
#[derive(Debug, Clone, Serialize)]
pub struct CaseReport {
    pub name: String,
    pub file: String,
    /// `scripted` or `live`.
    pub model: &'static str,
    pub runs: Vec<RunReport>,
    pub passed: u32,
    pub pass_rate: f64,
    /// The 95% Wilson interval of the pass rate.
    pub interval: [f64; 2],
}

impl CaseReport {
    pub fn new(name: String, file: String, model: &'static str, runs: Vec<RunReport>) -> Self {
        let total = u32::try_from(runs.len()).unwrap_or(u32::MAX);
        let passed = u32::try_from(runs.iter().filter(|r| r.passed).count()).unwrap_or(u32::MAX);
        let (low, high) = wilson(passed, total);
        Self {
            name,
            file,
            model,
            pass_rate: if total == 0 {
                0.0
            } else {
                f64::from(passed) / f64::from(total)
            },
            passed,
            runs,
            interval: [low, high],
        }
    }

    pub fn all_passed(&self) -> bool {
        !self.runs.is_empty() && self.runs.iter().all(|r| r.passed)
    }
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub cases: Vec<CaseReport>,
    pub passed: bool,
}

impl Report {
    pub fn new(cases: Vec<CaseReport>) -> Self {
        let passed = cases.iter().all(CaseReport::all_passed);
        Self { cases, passed }
    }

    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        for case in &self.cases {
            let total = case.runs.len();
            let verdict = if case.all_passed() { "PASS" } else { "FAIL" };
            if total > 1 {
                out.push_str(&format!(
                    "{verdict}  {} ({}): {}/{total} passed, {:.0}% (95% CI {:.0}%-{:.0}%)\n",
                    case.name,
                    case.model,
                    case.passed,
                    case.pass_rate * 100.0,
                    case.interval[0] * 100.0,
                    case.interval[1] * 100.0
                ));
            } else {
                out.push_str(&format!("{verdict}  {} ({})\n", case.name, case.model));
            }
            for (number, run) in case.runs.iter().enumerate() {
                for failure in &run.failures {
                    if total > 1 {
                        out.push_str(&format!("      run {}: {failure}\n", number + 1));
                    } else {
                        out.push_str(&format!("      {failure}\n"));
                    }
                }
            }
        }
        let cases_passed = self.cases.iter().filter(|c| c.all_passed()).count();
        out.push_str(&format!(
            "{cases_passed} of {} cases passed every run\n",
            self.cases.len()
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 0.001
    }

    #[test]
    fn wilson_intervals_match_the_textbook_values() {
        // 3 of 5: 0.231 to 0.882; 5 of 5: 0.566 to 1; 0 of 5: 0 to 0.434.
        let (low, high) = wilson(3, 5);
        assert!(close(low, 0.2307) && close(high, 0.8824), "{low} {high}");
        let (low, high) = wilson(5, 5);
        assert!(close(low, 0.5655) && close(high, 1.0), "{low} {high}");
        let (low, high) = wilson(0, 5);
        assert!(close(low, 0.0) && close(high, 0.4345), "{low} {high}");
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }
}
