//! `[model] models` and `[model.prices.NAME]`: the models `/model` offers
//! for a session and what their tokens cost, validated. It reads settings
//! only; it never asks a service for its list or its prices.

use std::collections::BTreeMap;

use super::error::{ConfigError, KeyPath};
use super::raw::RawModel;
use super::source::SourceFile;

/// What one model's tokens cost, in US dollars per million.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

impl Price {
    /// The cost of `input` and `output` tokens, in US dollars.
    pub fn cost(&self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input_per_million + output as f64 * self.output_per_million)
            / 1_000_000.0
    }
}

/// The models of the settings and their prices.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelChoices {
    /// `[model] models`, in the order written, without repeats.
    pub models: Vec<String>,
    /// `[model.prices.NAME]`, by model name.
    pub prices: BTreeMap<String, Price>,
}

const PRICE_ACCEPTED: &str =
    "a number of US dollars per million tokens, 0 or more (input = 1.25, output = 10)";
const MODEL_ACCEPTED: &str = "a model's name as the service spells it, e.g. \"gpt-5-mini\"";

/// Reads `raw`'s `models` and `prices` into `choices` (a later file's list
/// replaces an earlier one's; its prices are added).
pub fn read(
    src: &SourceFile,
    raw: &RawModel,
    table: &KeyPath,
    choices: &mut ModelChoices,
) -> Result<(), ConfigError> {
    if let Some(models) = &raw.models {
        let mut list: Vec<String> = Vec::new();
        for (i, name) in models.iter().enumerate() {
            if !is_model_name(name) {
                return Err(src.invalid(
                    table.key("models").index(i),
                    format!("{name:?} is not a model name"),
                    MODEL_ACCEPTED,
                ));
            }
            if !list.contains(name) {
                list.push(name.clone());
            }
        }
        choices.models = list;
    }
    for (name, price) in raw.prices.iter().flatten() {
        let key = |k: &str| table.key("prices").key(name).key(k);
        if !is_model_name(name) {
            return Err(src.invalid(
                table.key("prices").key(name),
                format!("{name:?} is not a model name"),
                MODEL_ACCEPTED,
            ));
        }
        let read = |k: &str, value: Option<f64>| match value {
            Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
            Some(v) => Err(src.invalid(key(k), format!("{v} is not a price"), PRICE_ACCEPTED)),
            None => Err(src.invalid(key(k), "missing", PRICE_ACCEPTED)),
        };
        let input_per_million = read("input", price.input)?;
        let output_per_million = read("output", price.output)?;
        choices.prices.insert(
            name.clone(),
            Price {
                input_per_million,
                output_per_million,
            },
        );
    }
    Ok(())
}

/// A name a service could take: not empty, at most 200 bytes, printable
/// with no spaces or control characters.
pub fn is_model_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && name
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && c != '\u{200b}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_price_costs_per_million_tokens() {
        let price = Price {
            input_per_million: 1.25,
            output_per_million: 10.0,
        };
        let cost = price.cost(200_000, 10_000);
        assert!((cost - 0.35).abs() < 1e-9, "{cost}");
    }

    #[test]
    fn model_names_have_no_spaces_or_controls() {
        assert!(is_model_name("gpt-5-mini"));
        assert!(is_model_name("anthropic/claude-sonnet-4.5"));
        for bad in ["", "gpt 5", "gpt\u{7}", "a\nb", "x\u{200b}y"] {
            assert!(!is_model_name(bad), "{bad:?}");
        }
        assert!(!is_model_name(&"m".repeat(201)));
    }
}
