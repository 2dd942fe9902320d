//! Front ends: they draw and read input, and never decide. A question only
//! collects an answer and hands it back through the consent port.

pub mod acp;
pub mod check;
pub mod gate;
pub mod line;
pub mod text;
pub mod tui;
