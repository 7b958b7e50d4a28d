//! Asking a switch from the API's runtime: the core's request path
//! ([`Switches::request`], [`Switches::request_applied`]) behind a tokio oneshot, and its
//! outcomes as HTTP answers.
//!
//! The callback the core calls (once, on the switch's worker thread) only sends on the
//! oneshot; the handler awaits it, so the API's thread never blocks and a worker never
//! waits for the API.
//!
//! | outcome                                   | status |
//! |-------------------------------------------|--------|
//! | the reply (multipart parts gathered)      | `Ok`   |
//! | no such switch connected                  | 404    |
//! | the switch refused it with an ERROR       | 422, naming the error's type and code |
//! | no answer within `[api] switch_timeout`   | 504    |
//! | the switch left before it answered        | 503    |
//! | not expressible in the switch's version   | 400    |

use std::time::Duration;

use axum::http::StatusCode;
use controller::switches::{Reply, ReplyFn, SendError, Switches};
use openflow::common::ErrorBody;
use openflow::{of10, of13, Message};
use tokio::sync::oneshot;

use crate::dpid;
use crate::dpid::Dpid;
use crate::error::ApiError;

/// How much longer than the core's own deadline the handler waits for the callback
/// before it gives up (the core answers at its deadline; this only bounds a worker too
/// busy to look at its commands).
const SLACK: Duration = Duration::from_secs(1);

/// Sends `msg` to switch `dpid` and waits for the answer, whatever it is: the caller
/// decides what an ERROR, a timeout or a departure means ([`into_messages`] makes them
/// the errors of the module doc). Only a send the core refuses is an error here.
pub async fn ask_reply(
    switches: &Switches,
    dpid: Dpid,
    msg: &Message,
    timeout: Duration,
) -> Result<Reply, ApiError> {
    call(timeout, |f| switches.request(dpid, msg, timeout, f)).await
}

/// Sends `msg` to switch `dpid` and waits for its reply (every part of a multipart
/// reply); the other outcomes are errors (see the module doc).
pub async fn ask(
    switches: &Switches,
    dpid: Dpid,
    msg: &Message,
    timeout: Duration,
) -> Result<Vec<Message>, ApiError> {
    let reply = ask_reply(switches, dpid, msg, timeout).await?;
    into_messages(dpid, reply)
}

/// Sends `msg` (FLOW_MOD, PACKET_OUT, ...) and a barrier to switch `dpid`, and waits
/// until the switch processed it: `Ok` when the barrier reply came, 422 when the switch
/// refused the message (see the module doc for the rest).
pub async fn apply(
    switches: &Switches,
    dpid: Dpid,
    msg: &Message,
    timeout: Duration,
) -> Result<(), ApiError> {
    let reply = applied_reply(switches, dpid, msg, timeout).await?;
    into_messages(dpid, reply).map(drop)
}

/// Makes the request with `send` and awaits the callback.
/// Sends `msg` followed by a barrier ([`Switches::request_applied`]) and gives the
/// switch's answer as it is, for callers that decide themselves what an ERROR or a
/// timeout means (static flows keep a refused flow). Not sent: the error, mapped as
/// [`send_error`] maps it.
pub async fn applied_reply(
    switches: &Switches,
    dpid: Dpid,
    msg: &Message,
    timeout: Duration,
) -> Result<Reply, ApiError> {
    call(timeout, |f| switches.request_applied(dpid, msg, timeout, f)).await
}

async fn call(
    timeout: Duration,
    send: impl FnOnce(ReplyFn) -> Result<(), SendError>,
) -> Result<Reply, ApiError> {
    let (tx, rx) = oneshot::channel();
    send(Box::new(move |reply| {
        // The handler may have gone (the client hung up): nobody to tell.
        let _ = tx.send(reply);
    }))
    .map_err(send_error)?;
    match tokio::time::timeout(timeout + SLACK, rx).await {
        Ok(Ok(reply)) => Ok(reply),
        // The callback is always called (dropped unanswered, it says SwitchGone).
        Ok(Err(_)) => Ok(Reply::SwitchGone),
        Err(_) => Ok(Reply::TimedOut),
    }
}

/// The reply's messages, or the error the other outcomes are (see the module doc).
pub fn into_messages(dpid: Dpid, reply: Reply) -> Result<Vec<Message>, ApiError> {
    let sw = dpid::format(dpid);
    match reply {
        Reply::Messages(m) => Ok(m),
        Reply::Error(e) => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("switch {sw} refused it: {}", describe(&e)),
        )),
        Reply::TimedOut => Err(ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            format!("switch {sw} did not answer in time ([api] switch_timeout)"),
        )),
        Reply::SwitchGone => Err(ApiError::unavailable(format!(
            "switch {sw} disconnected before it answered"
        ))),
        Reply::Busy => Err(busy(&sw)),
    }
}

/// A send the core refused, as an answer.
pub fn send_error(e: SendError) -> ApiError {
    match e {
        SendError::NotConnected(d) => {
            ApiError::not_found(format!("no switch {} is connected", dpid::format(d.0)))
        }
        SendError::Busy(d) => busy(&dpid::format(d.0)),
        // The switch reconnected speaking another version since its info was read.
        e @ SendError::WrongVersion { .. } => {
            ApiError::unavailable(format!("{e}; it reconnected meanwhile: try again"))
        }
        e @ SendError::Encode { .. } => ApiError::bad_request(e.to_string()),
    }
}

/// A connected switch whose queue (the worker's, or its own output at the hard cap)
/// is full: 503, busy, not gone; the client may try again.
fn busy(sw: &str) -> ApiError {
    ApiError::unavailable(format!(
        "switch {sw} is busy: its queue is full, nothing was sent; try again"
    ))
}

/// An ERROR message as `FLOW_MOD_FAILED/TABLE_FULL (type 5, code 1)`.
pub fn describe(msg: &Message) -> String {
    let body = match msg {
        Message::V10(of10::Message::Error(b)) => (b, true),
        Message::V13(of13::Message::Error(b)) => (b, false),
        other => return format!("an unexpected {} message", other.type_name()),
    };
    match body {
        (ErrorBody::Standard { err_type, code, .. }, v10) => {
            let name = if v10 {
                of10::error_codes::describe_error(*err_type, *code)
            } else {
                of13::error_codes::describe(body.0)
            };
            format!("{name} (type {err_type}, code {code})")
        }
        (e @ ErrorBody::Experimenter { .. }, _) => of13::error_codes::describe(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_named_in_each_version() {
        let e = ErrorBody::Standard {
            err_type: 2,
            code: 4,
            data: vec![],
        };
        assert_eq!(
            describe(&Message::V13(of13::Message::Error(e.clone()))),
            "BAD_ACTION/BAD_OUT_PORT (type 2, code 4)"
        );
        assert_eq!(
            describe(&Message::V10(of10::Message::Error(e))),
            "BAD_ACTION/BAD_OUT_PORT (type 2, code 4)"
        );
        let refused = into_messages(
            openflow::Dpid(1),
            Reply::Error(Message::V13(of13::Message::Error(ErrorBody::Standard {
                err_type: 5,
                code: 1,
                data: vec![],
            }))),
        )
        .unwrap_err();
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(
            refused.message.contains("FLOW_MOD_FAILED/TABLE_FULL"),
            "{refused:?}"
        );
        assert_eq!(
            into_messages(openflow::Dpid(1), Reply::TimedOut)
                .unwrap_err()
                .status,
            StatusCode::GATEWAY_TIMEOUT
        );
        assert_eq!(
            into_messages(openflow::Dpid(1), Reply::SwitchGone)
                .unwrap_err()
                .status,
            StatusCode::SERVICE_UNAVAILABLE
        );
    }
}
