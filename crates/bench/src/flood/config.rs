//! What a flood is asked to do: the [`FloodStyle`] of its connections, and the
//! [`FloodConfig`] `--flood RATE,STYLE` parses into.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;

/// How each flood connection misbehaves once connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FloodStyle {
    /// Connect and say nothing (`silent`).
    Silent,
    /// Send [`super::GARBAGE_LEN`] random bytes whose first byte is no OpenFlow version, once
    /// (`garbage`).
    Garbage,
    /// Send one valid HELLO, then nothing (`half-handshake`).
    HalfHandshake,
    /// Complete the switch side of the handshake, then answer nothing, not even ECHO
    /// (`handshake-silent`, also spelt `handshake-then-silent`).
    #[serde(rename = "handshake-silent")]
    HandshakeThenSilent,
    /// Send a TLS ClientHello, then nothing (`tls-hello`): a TLS handshake flood.
    TlsHello,
}

impl FloodStyle {
    /// Every style, in the order of the table in the module doc.
    pub const ALL: [FloodStyle; 5] = [
        FloodStyle::Silent,
        FloodStyle::Garbage,
        FloodStyle::HalfHandshake,
        FloodStyle::HandshakeThenSilent,
        FloodStyle::TlsHello,
    ];

    /// The name `--flood RATE,STYLE` takes.
    pub fn name(self) -> &'static str {
        match self {
            FloodStyle::Silent => "silent",
            FloodStyle::Garbage => "garbage",
            FloodStyle::HalfHandshake => "half-handshake",
            FloodStyle::HandshakeThenSilent => "handshake-silent",
            FloodStyle::TlsHello => "tls-hello",
        }
    }
}

impl fmt::Display for FloodStyle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a `--flood` argument did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FloodParseError {
    /// The style is none of the known names.
    #[error(
        "unknown flood style {0:?}: expected silent, garbage, half-handshake or handshake-silent"
    )]
    UnknownStyle(String),
    /// Not of the form `RATE,STYLE`.
    #[error("expected RATE,STYLE (e.g. 10000,silent), got {0:?}")]
    Shape(String),
    /// The rate is not a whole number of connections per second above zero.
    #[error("flood rate must be a whole number of connections per second above 0, got {0:?}")]
    Rate(String),
}

impl FromStr for FloodStyle {
    type Err = FloodParseError;

    fn from_str(s: &str) -> Result<FloodStyle, FloodParseError> {
        match s.trim() {
            "silent" => Ok(FloodStyle::Silent),
            "garbage" => Ok(FloodStyle::Garbage),
            "half-handshake" => Ok(FloodStyle::HalfHandshake),
            "handshake-silent" | "handshake-then-silent" => Ok(FloodStyle::HandshakeThenSilent),
            "tls-hello" | "tls" => Ok(FloodStyle::TlsHello),
            other => Err(FloodParseError::UnknownStyle(other.to_string())),
        }
    }
}

/// What to flood, how fast, and within which bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloodConfig {
    /// The controller to flood. Loopback only unless `allow_non_loopback`.
    pub addr: SocketAddr,
    /// New connections per second (above 0).
    pub rate: u32,
    /// What each connection does once connected.
    pub style: FloodStyle,
    /// The most sockets open at once; at the cap the oldest is closed for each new one.
    pub max_connections: usize,
    /// How long the flood lasts (the stop flag may end it earlier).
    pub duration: Duration,
    /// Let `addr` be something other than loopback: set only when the user named the
    /// address explicitly (`--target`), never by default.
    pub allow_non_loopback: bool,
}

impl FloodConfig {
    /// The address `RATE,STYLE` floods until told otherwise: the controller's default
    /// listener on loopback.
    pub const DEFAULT_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 6653);
    /// Default cap on open sockets: 10,000, one second of the benchmark's 10,000/s flood,
    /// and under the usual 20,000 hard limit on open files with room to spare.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
    /// Default length of a flood: 10 s. A flood run beside a benchmark is ended by its
    /// stop flag instead; set `duration` to cover the benchmark.
    pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

    /// A flood of `addr` at `rate` connections per second in `style`, with the default
    /// cap and duration, loopback only.
    pub fn new(addr: SocketAddr, rate: u32, style: FloodStyle) -> FloodConfig {
        FloodConfig {
            addr,
            rate,
            style,
            max_connections: FloodConfig::DEFAULT_MAX_CONNECTIONS,
            duration: FloodConfig::DEFAULT_DURATION,
            allow_non_loopback: false,
        }
    }
}

/// Parses `RATE,STYLE` (`10000,silent`, `500,garbage`, `100,half-handshake`,
/// `100,handshake-silent`) into a flood of [`FloodConfig::DEFAULT_ADDR`] with the
/// default cap and duration; the caller sets `addr` (and `allow_non_loopback` if the
/// user named the target) afterwards.
impl FromStr for FloodConfig {
    type Err = FloodParseError;

    fn from_str(s: &str) -> Result<FloodConfig, FloodParseError> {
        let (rate, style) = s
            .split_once(',')
            .ok_or_else(|| FloodParseError::Shape(s.to_string()))?;
        let rate = rate.trim().replace('_', "");
        let rate: u32 = match rate.parse() {
            Ok(r) if r > 0 => r,
            _ => return Err(FloodParseError::Rate(rate)),
        };
        let style: FloodStyle = style.parse()?;
        Ok(FloodConfig::new(FloodConfig::DEFAULT_ADDR, rate, style))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rate_and_style() {
        let c: FloodConfig = "10000,silent".parse().unwrap();
        assert_eq!((c.rate, c.style), (10_000, FloodStyle::Silent));
        assert_eq!(c.addr, FloodConfig::DEFAULT_ADDR);
        assert!(!c.allow_non_loopback);
        for (s, style) in [
            ("500,garbage", FloodStyle::Garbage),
            ("100,half-handshake", FloodStyle::HalfHandshake),
            ("100,handshake-silent", FloodStyle::HandshakeThenSilent),
            (
                "100, handshake-then-silent",
                FloodStyle::HandshakeThenSilent,
            ),
            ("10_000,silent", FloodStyle::Silent),
        ] {
            assert_eq!(s.parse::<FloodConfig>().unwrap().style, style, "{s}");
        }
        for style in FloodStyle::ALL {
            assert_eq!(style.name().parse::<FloodStyle>().unwrap(), style);
            assert_eq!(
                serde_json::to_string(&style).unwrap(),
                format!("\"{}\"", style.name())
            );
        }
        assert!(matches!(
            "0,silent".parse::<FloodConfig>(),
            Err(FloodParseError::Rate(_))
        ));
        assert!(matches!(
            "x,silent".parse::<FloodConfig>(),
            Err(FloodParseError::Rate(_))
        ));
        assert!(matches!(
            "10".parse::<FloodConfig>(),
            Err(FloodParseError::Shape(_))
        ));
        assert!(matches!(
            "10,loud".parse::<FloodConfig>(),
            Err(FloodParseError::UnknownStyle(_))
        ));
    }
}
