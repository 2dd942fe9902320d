//! What the file tools share to touch the project: confinement (`confine`,
//! the only way in), naming the one path a call names (`paths`), the
//! change machinery of the writing tools (`change`), and the close matches
//! a not-found result names (`near`). Never decides.

pub mod change;
pub mod confine;
pub mod near;
pub(crate) mod paths;
