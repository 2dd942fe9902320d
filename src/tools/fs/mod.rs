//! What the file tools share to touch the project: confinement (`confine`,
//! the only way in), naming the one path a call names (`paths`), and the
//! change machinery of the writing tools (`change`). Never decides.

pub mod change;
pub mod confine;
pub(crate) mod paths;
