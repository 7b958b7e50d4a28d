//! The bearer token: where it comes from ([`Token::resolve`]) and how a request is
//! checked against it ([`Token::check`]).
//!
//! 1. `PHAROS_API_TOKEN`, when set and not empty;
//! 2. else `[api] token_file` (its content, surrounding whitespace trimmed);
//! 3. else a fresh random token (32 bytes from the OS, 64 hex digits), written to
//!    `$XDG_RUNTIME_DIR/pharos/api-token` (else `./pharos-api-token`) with mode 0600,
//!    the file created that way so no other user can read it for an instant.
//!
//! The log names where the token came from (the variable, or the file's path), never the
//! token. The comparison is constant-time in the token's bytes (`subtle`'s `ct_eq`); the
//! length is not secret (a generated token is always 64 digits).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use subtle::ConstantTimeEq as _;

/// The environment variable that gives the token.
pub const TOKEN_ENV: &str = "PHAROS_API_TOKEN";

/// The API's token.
#[derive(Clone)]
pub struct Token {
    /// The secret; never logged, never in `Debug`.
    secret: String,
    /// Where it came from, for the log and `GET /controller`.
    pub source: TokenSource,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// Where the token came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// `PHAROS_API_TOKEN`.
    Env,
    /// `[api] token_file`.
    File(PathBuf),
    /// Made at start-up and written to this file.
    Generated(PathBuf),
}

impl std::fmt::Display for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenSource::Env => write!(f, "the environment ({TOKEN_ENV})"),
            TokenSource::File(p) => write!(f, "{}", p.display()),
            TokenSource::Generated(p) => write!(f, "{} (generated)", p.display()),
        }
    }
}

/// What a request's `Authorization` header says, checked against the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The right token.
    Ok,
    /// No `Authorization: Bearer ...` header: 401.
    Missing,
    /// A token that is not the one: 403.
    Wrong,
}

impl Token {
    /// A token given by the caller (tests, embedders).
    pub fn new(secret: impl Into<String>, source: TokenSource) -> Token {
        Token {
            secret: secret.into(),
            source,
        }
    }

    /// The token by the rules of the module doc. `env` is `PHAROS_API_TOKEN`'s value;
    /// `runtime_dir` is `$XDG_RUNTIME_DIR`. The error is a sentence naming the file.
    pub fn resolve(
        env: Option<String>,
        token_file: Option<&Path>,
        runtime_dir: Option<PathBuf>,
    ) -> Result<Token, String> {
        if let Some(secret) = env.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()) {
            return Ok(Token::new(secret, TokenSource::Env));
        }
        if let Some(path) = token_file {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
            let secret = text.trim();
            if secret.is_empty() {
                return Err(format!("the token file {} is empty", path.display()));
            }
            return Ok(Token::new(secret, TokenSource::File(path.to_path_buf())));
        }
        let path = default_token_path(runtime_dir);
        let secret = generate()?;
        write_private(&path, &secret)
            .map_err(|e| format!("cannot write the API token to {}: {e}", path.display()))?;
        Ok(Token::new(secret, TokenSource::Generated(path)))
    }

    /// Checks an `Authorization` header value (`None`: no header).
    pub fn check(&self, header: Option<&[u8]>) -> Check {
        let Some(value) = header else {
            return Check::Missing;
        };
        // RFC 6750 §2.1: `Bearer` then one space; the scheme is case-insensitive.
        let Some(given) = value
            .get(..7)
            .filter(|s| s.eq_ignore_ascii_case(b"bearer "))
            .map(|_| value[7..].trim_ascii())
        else {
            return Check::Missing;
        };
        if given.ct_eq(self.secret.as_bytes()).into() {
            Check::Ok
        } else {
            Check::Wrong
        }
    }
}

/// Where a generated token is written (and where `pharos ctl` looks for it):
/// `runtime_dir/pharos/api-token` (`runtime_dir` is `$XDG_RUNTIME_DIR`), else
/// `pharos-api-token` in the working directory, made absolute so a log line says where it
/// is wherever it is read.
pub fn default_token_path(runtime_dir: Option<PathBuf>) -> PathBuf {
    match runtime_dir.filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => dir.join("pharos").join("api-token"),
        None => std::env::current_dir()
            .unwrap_or_default()
            .join("pharos-api-token"),
    }
}

/// 32 random bytes from the OS, as 64 hex digits.
fn generate() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the API token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes `secret` to `path`, readable and writable by this user only: the directory is
/// made 0700 if it is new, the file is created 0600 (and set to 0600 if it existed).
fn write_private(path: &Path, secret: &str) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    // A file left by an earlier run keeps its old mode through `open`: set it.
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    f.write_all(secret.as_bytes())?;
    f.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_checked_in_constant_time_and_by_rfc_6750() {
        let t = Token::new("s3cret", TokenSource::Env);
        assert_eq!(t.check(None), Check::Missing);
        assert_eq!(t.check(Some(b"Basic czNjcmV0")), Check::Missing);
        assert_eq!(t.check(Some(b"Bearer")), Check::Missing);
        assert_eq!(t.check(Some(b"Bearer s3cret")), Check::Ok);
        assert_eq!(t.check(Some(b"bearer s3cret")), Check::Ok);
        assert_eq!(t.check(Some(b"Bearer s3cre")), Check::Wrong);
        assert_eq!(t.check(Some(b"Bearer s3cret2")), Check::Wrong);
        assert!(!format!("{t:?}").contains("s3cret"));
    }

    #[test]
    fn env_wins_then_the_file_then_a_generated_one_written_0600() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("pharos-api-auth-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("given");
        std::fs::write(&file, "  from-file\n").unwrap();
        let t = Token::resolve(Some("from-env".into()), Some(&file), None).unwrap();
        assert_eq!(
            (t.secret.as_str(), &t.source),
            ("from-env", &TokenSource::Env)
        );
        let t = Token::resolve(Some(" ".into()), Some(&file), None).unwrap();
        assert_eq!(t.secret, "from-file");
        let e = Token::resolve(None, Some(&dir.join("absent")), None).unwrap_err();
        assert!(e.contains("absent"), "{e}");

        let t = Token::resolve(None, None, Some(dir.clone())).unwrap();
        let path = dir.join("pharos").join("api-token");
        assert_eq!(t.source, TokenSource::Generated(path.clone()));
        assert_eq!(t.secret.len(), 64);
        assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), t.secret);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A second start makes another token, and a loose file is tightened.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let again = Token::resolve(None, None, Some(dir.clone())).unwrap();
        assert_ne!(again.secret, t.secret);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
