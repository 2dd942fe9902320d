//! What a session's requests spent in this run: the tokens the service
//! reported, and their cost when `[model.prices.NAME]` gives every model
//! that answered a price. Arithmetic only; it never reads a clock or a file.

use crate::config::Price;
use crate::model::Usage;

/// A session's tokens in this run, and their cost where it is known.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub input_tokens: u64,
    pub output_tokens: u64,
    cost: f64,
    /// A response came from a model without a price: the cost is unknown.
    unpriced: bool,
}

impl Spent {
    /// Counts one response's `usage`, answered by a model of `price`.
    pub fn add(&mut self, usage: Usage, price: Option<&Price>) {
        if usage.input_tokens == 0 && usage.output_tokens == 0 {
            return;
        }
        self.input_tokens = self.input_tokens.saturating_add(usage.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(usage.output_tokens);
        match price {
            Some(price) => self.cost += price.cost(usage.input_tokens, usage.output_tokens),
            None => self.unpriced = true,
        }
    }

    /// The cost in US dollars, when every counted response had a price.
    pub fn cost_usd(&self) -> Option<f64> {
        let counted = self.input_tokens > 0 || self.output_tokens > 0;
        (counted && !self.unpriced).then_some(self.cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input_tokens: u64, output_tokens: u64) -> Usage {
        Usage {
            input_tokens,
            output_tokens,
        }
    }

    #[test]
    fn tokens_add_up_and_cost_needs_every_price() {
        let price = Price {
            input_per_million: 2.0,
            output_per_million: 8.0,
        };
        let mut spent = Spent::default();
        assert_eq!(spent.cost_usd(), None, "nothing counted, no cost");
        spent.add(usage(1000, 100), Some(&price));
        spent.add(usage(2000, 200), Some(&price));
        assert_eq!((spent.input_tokens, spent.output_tokens), (3000, 300));
        let cost = spent.cost_usd().unwrap_or_default();
        assert!((cost - 0.0084).abs() < 1e-12, "{cost}");
        spent.add(usage(0, 0), None);
        assert!(spent.cost_usd().is_some(), "an empty usage changes nothing");
        spent.add(usage(10, 1), None);
        assert_eq!(spent.cost_usd(), None, "one unpriced answer: cost unknown");
        assert_eq!(spent.input_tokens, 3010);
    }
}
