use super::*;

fn parse_match(b: &[u8]) -> DecodeResult<Match> {
    Match::parse(&mut Reader::new(b, 0, "test"))
}
