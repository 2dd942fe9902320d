pub mod markdown;
pub mod wrap;
