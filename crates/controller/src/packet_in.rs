//! A PACKET_IN as the apps' handlers get it: the message viewed in place, and the
//! Ethernet header of its packet checked once for every app.
//!
//! The dispatcher makes one [`PacketIn`] per PACKET_IN, from the [`openflow::Frame`]
//! the worker framed (so the OpenFlow header is not checked again), and hands the same
//! one to every handler in order: an app reads the Ethernet addresses with
//! [`PacketIn::eth`] instead of checking the frame itself. It dereferences to the
//! codec's view ([`openflow::view::PacketIn`]): `p.in_port()`, `p.data()`,
//! `p.buffer_id()` and `PacketOut::of_packet_in(p, ..)` work on it as they do on the
//! view.

use openflow::view;
use openflow::{DecodeResult, Frame};
use packet::ethernet::EthernetFrame;

/// A PACKET_IN and its packet's Ethernet header (see the module doc).
#[derive(Debug)]
pub struct PacketIn<'a> {
    /// The message, viewed in place.
    view: view::PacketIn<&'a [u8]>,
    /// The packet's Ethernet header; `None` when the packet is shorter than one.
    eth: Option<EthernetFrame<&'a [u8]>>,
}

impl<'a> PacketIn<'a> {
    /// The PACKET_IN `frame` is (its header checked where the stream was framed).
    #[inline]
    pub fn from_frame(frame: Frame<'a>) -> DecodeResult<PacketIn<'a>> {
        Ok(PacketIn::new(view::PacketIn::from_frame(frame)?))
    }

    /// The PACKET_IN of `bytes`, one whole message (tests and tools; the dispatcher
    /// uses [`PacketIn::from_frame`]).
    pub fn parse(bytes: &'a [u8]) -> DecodeResult<PacketIn<'a>> {
        PacketIn::from_frame(Frame::new_checked(bytes)?)
    }

    /// Wraps a view already made, checking its packet's Ethernet header.
    #[inline]
    pub fn new(view: view::PacketIn<&'a [u8]>) -> PacketIn<'a> {
        // The packet is the message's tail: borrowed from the message's bytes, for `'a`.
        let bytes: &'a [u8] = view.into_inner();
        let data = &bytes[bytes.len() - view.data().len()..];
        let eth = EthernetFrame::new_checked(data).ok();
        PacketIn { view, eth }
    }

    /// The packet's Ethernet header (destination, source, EtherType, VLAN tags and
    /// payload), checked once; `None` when the packet is shorter than a header.
    #[inline]
    pub fn eth(&self) -> Option<&EthernetFrame<&'a [u8]>> {
        self.eth.as_ref()
    }

    /// The codec's view of the message.
    #[inline]
    pub fn view(&self) -> &view::PacketIn<&'a [u8]> {
        &self.view
    }
}

impl<'a> std::ops::Deref for PacketIn<'a> {
    type Target = view::PacketIn<&'a [u8]>;

    #[inline]
    fn deref(&self) -> &view::PacketIn<&'a [u8]> {
        &self.view
    }
}
