//! `ovs-ofctl` flow strings: parsing never panics, an error's span lies in the input and
//! names its token, and a parsed flow prints to a string that parses back to it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use openflow::ofctl::{parse_flow, parse_flow_entry};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    match parse_flow(s) {
        Ok(f) => {
            let text = f.to_string();
            assert_eq!(parse_flow(&text).as_ref(), Ok(&f), "{text}");
        }
        Err(e) => assert_eq!(s.get(e.span.clone()), Some(e.token.as_str())),
    }
    let _ = parse_flow_entry(s);
});
