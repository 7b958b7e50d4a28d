//! [`PacketOut`]: sends a packet through a list of actions, encoded to a 1.0 or 1.3
//! PACKET_OUT, and [`EncodedActions`], actions encoded once for many packets.

use super::action::Action;
use super::port::{PortNo, NO_BUFFER};
use super::v10::{append_fixed, emit_actions_v10};
use super::v13::emit_action_v13;
use crate::error::{not_in, EncodeResult};
use crate::header::{self, Version};
use crate::msg_type::PACKET_OUT;
use crate::view::PacketIn;
use crate::wire::{length_field, LenMark, Put};
use crate::{of10, of13};

/// Sends a packet (given, or buffered on the switch) through a list of actions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacketOut<'a> {
    /// The switch buffer holding the packet; `data` is then ignored by the switch.
    pub buffer_id: Option<u32>,
    /// The port the packet is considered to have come in on.
    pub in_port: PortNo,
    pub actions: &'a [Action],
    pub data: &'a [u8],
}

impl<'a> PacketOut<'a> {
    /// Sends a packet held in a switch buffer.
    pub fn buffered(buffer_id: u32, in_port: PortNo, actions: &'a [Action]) -> Self {
        PacketOut {
            buffer_id: Some(buffer_id),
            in_port,
            actions,
            data: &[],
        }
    }

    /// Sends the packet `data`.
    pub fn unbuffered(data: &'a [u8], in_port: PortNo, actions: &'a [Action]) -> Self {
        PacketOut {
            buffer_id: None,
            in_port,
            actions,
            data,
        }
    }

    /// Sends the packet of a PACKET_IN through `actions`: from the switch's buffer when
    /// the switch kept it there, else its bytes; in on the port it came in on. What
    /// every forwarding app answers a PACKET_IN with (`ctx.send_packet_out(..)`).
    pub fn of_packet_in<T: AsRef<[u8]>>(p: &'a PacketIn<T>, actions: &'a [Action]) -> Self {
        let in_port = PortNo::from_u32(p.in_port());
        match p.buffer_id() {
            Some(id) => PacketOut::buffered(id, in_port, actions),
            None => PacketOut::unbuffered(p.data(), in_port, actions),
        }
    }

    /// Appends the PACKET_OUT for `version` to `out`; on error `out` is unchanged.
    pub fn encode(&self, version: Version, xid: u32, out: &mut Vec<u8>) -> EncodeResult<usize> {
        self.encode_parts(version, xid, [&[], &[]], out)
    }

    /// [`PacketOut::encode`], with actions encoded beforehand: `pre`'s, all but its
    /// action number `skip`, then this PACKET_OUT's own (usually none). For an app
    /// that sends the same actions with many packets: the routing app floods each
    /// packet out of its switch's flood ports but the one it came in by. An error if
    /// `pre` was encoded for another version.
    ///
    /// ```
    /// use openflow::model::{Action, EncodedActions, PacketOut, PortNo};
    /// use openflow::Version;
    ///
    /// let ports = [1, 2, 3].map(|n| Action::output(PortNo::Physical(n)));
    /// let flood = EncodedActions::new(Version::V1_0, &ports).unwrap();
    /// // A packet that came in by port 2 goes out of 1 and 3.
    /// let po = PacketOut::buffered(7, PortNo::Physical(2), &[]);
    /// let (mut a, mut b) = (Vec::new(), Vec::new());
    /// po.encode_with(Version::V1_0, 9, &flood, Some(1), &mut a).unwrap();
    /// let out = [ports[0], ports[2]];
    /// PacketOut::buffered(7, PortNo::Physical(2), &out).encode(Version::V1_0, 9, &mut b).unwrap();
    /// assert_eq!(a, b);
    /// ```
    pub fn encode_with(
        &self,
        version: Version,
        xid: u32,
        pre: &EncodedActions,
        skip: Option<usize>,
        out: &mut Vec<u8>,
    ) -> EncodeResult<usize> {
        if pre.version != Some(version) && !pre.is_empty() {
            return Err(not_in(version, "actions encoded for another version"));
        }
        self.encode_parts(version, xid, pre.without(skip), out)
    }

    /// The PACKET_OUT with the encoded actions `pre` before its own.
    fn encode_parts(
        &self,
        version: Version,
        xid: u32,
        pre: [&[u8]; 2],
        out: &mut Vec<u8>,
    ) -> EncodeResult<usize> {
        match version {
            Version::V1_0 => self.encode_v10(xid, pre, out),
            Version::V1_3 => header::encode_with(out, of13::VERSION, PACKET_OUT, xid, |o| {
                o.put_u32(self.buffer_id.unwrap_or(NO_BUFFER));
                o.put_u32(self.in_port.to_v13()?);
                let start = o.len();
                let len = LenMark::new(o, start + 8, "ofp_packet_out.actions_len");
                o.put_zeros(6);
                pre.iter().for_each(|b| o.put_slice(b));
                for a in self.actions {
                    emit_action_v13(a, o)?;
                }
                len.finish(o)?;
                o.put_slice(self.data);
                Ok(())
            }),
        }
    }
}

/// Actions encoded once for one OpenFlow version, to be sent with many packets
/// ([`PacketOut::encode_with`]): encoding is then a copy of their bytes, not a pass
/// over each action. The default is the empty list, of no version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncodedActions {
    version: Option<Version>,
    bytes: Vec<u8>,
    /// Where each action ends in `bytes`.
    ends: Vec<usize>,
}

impl EncodedActions {
    /// `actions` encoded for `version`; the error of the first that cannot be.
    pub fn new(version: Version, actions: &[Action]) -> EncodeResult<Self> {
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(actions.len());
        for a in actions {
            match version {
                Version::V1_0 => emit_actions_v10(std::slice::from_ref(a), &mut bytes)?,
                Version::V1_3 => emit_action_v13(a, &mut bytes)?,
            }
            ends.push(bytes.len());
        }
        Ok(EncodedActions {
            version: Some(version),
            bytes,
            ends,
        })
    }

    /// The version they were encoded for (`None`: the empty default).
    pub fn version(&self) -> Option<Version> {
        self.version
    }

    /// How many actions.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The bytes of every action but number `skip` (if there is one): those before
    /// it and those after it.
    #[inline]
    fn without(&self, skip: Option<usize>) -> [&[u8]; 2] {
        match skip.filter(|&i| i < self.ends.len()) {
            Some(i) => {
                let from = if i == 0 { 0 } else { self.ends[i - 1] };
                [&self.bytes[..from], &self.bytes[self.ends[i]..]]
            }
            None => [&self.bytes, &[]],
        }
    }
}

impl PacketOut<'_> {
    /// The 1.0 message (1.0.0 §5.3.6): its 16 fixed bytes written at fixed offsets
    /// straight into `out` ([`append_fixed`]), the lengths set at the end (the flood of
    /// the default apps sends one per PACKET_IN).
    fn encode_v10(&self, xid: u32, pre: [&[u8]; 2], out: &mut Vec<u8>) -> EncodeResult<usize> {
        let in_port = self.in_port.to_v10()?;
        if self.actions.is_empty() {
            return self.encode_v10_encoded(xid, in_port, pre, out);
        }
        let start = out.len();
        let b = append_fixed::<16>(out);
        b[0] = of10::VERSION;
        b[1] = PACKET_OUT;
        b[4..8].copy_from_slice(&xid.to_be_bytes());
        b[8..12].copy_from_slice(&self.buffer_id.unwrap_or(NO_BUFFER).to_be_bytes());
        b[12..14].copy_from_slice(&in_port.to_be_bytes());
        let actions_len = LenMark::placed(start + 16, start + 14, "ofp_packet_out.actions_len");
        let len = LenMark::placed(start, start + 2, "ofp_header");
        out.extend_from_slice(pre[0]);
        out.extend_from_slice(pre[1]);
        // The same errors as the general path: the actions' length first.
        emit_actions_v10(self.actions, out)
            .and_then(|()| actions_len.finish(out))
            .and_then(|_| {
                out.extend_from_slice(self.data);
                len.finish(out)
            })
            .inspect_err(|_| out.truncate(start))
    }

    /// [`PacketOut::encode_v10`] when every action is already encoded (`pre`): the
    /// lengths are known before anything is written, so the message goes out as two
    /// 8-byte words and three copies (the routing app's flood; through the general
    /// path, `out`'s length and address were reloaded after each of its writes).
    fn encode_v10_encoded(
        &self,
        xid: u32,
        in_port: u16,
        pre: [&[u8]; 2],
        out: &mut Vec<u8>,
    ) -> EncodeResult<usize> {
        let actions_len = pre[0].len() + pre[1].len();
        let len = 16 + actions_len + self.data.len();
        // The general path's errors, in its order.
        let actions_field = length_field("ofp_packet_out.actions_len", actions_len)?;
        let len_field = length_field("ofp_header", len)?;
        // version 1, type 13 (OFPT_PACKET_OUT), length, xid; buffer_id, in_port,
        // actions_len (1.0.0 §5.3.6).
        let head = u64::from(of10::VERSION) << 56
            | u64::from(PACKET_OUT) << 48
            | u64::from(len_field) << 32
            | u64::from(xid);
        let buffer_id = self.buffer_id.unwrap_or(NO_BUFFER);
        let fixed =
            u64::from(buffer_id) << 32 | u64::from(in_port) << 16 | u64::from(actions_field);
        out.reserve(len);
        out.extend_from_slice(&head.to_be_bytes());
        out.extend_from_slice(&fixed.to_be_bytes());
        out.extend_from_slice(pre[0]);
        out.extend_from_slice(pre[1]);
        out.extend_from_slice(self.data);
        Ok(len)
    }
}
