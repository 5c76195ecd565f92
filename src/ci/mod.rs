//! The CI gate's parts, after the pipeline: a [`lock`] file of what every server offered, and
//! the [`drift`] between it and a fresh scan.

pub mod drift;
pub mod lock;
