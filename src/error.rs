//! Errors that end a command, each mapped to an exit code.

use std::fmt;

/// An error that stops the command; every one exits with code 2.
#[derive(Debug)]
pub struct Error {
    message: String,
}

impl Error {
    /// An error with a message that says what was wrong and where.
    pub fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
        }
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        2
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Shorthand for results that end in an [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
