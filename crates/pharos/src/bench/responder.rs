//! `pharos bench responder`: a trivial controller, the ceiling of the machine and of the
//! generator.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bench::{run_responder_with, Answer, ResponderOptions};

use super::{cores, parse_answer, seconds, stop_on_signals};

/// A trivial controller: handshake, then canned messages for every PACKET_IN
///
/// It measures the ceiling of this machine and of the generator, nothing more: it has
/// no admission tier and handshakes every connection it accepts, so a connection flood
/// (`pharos bench flood`, `--flood`) collapses its throughput. Benchmark floods
/// against a real controller.
#[derive(Debug, clap::Args)]
pub struct ResponderArgs {
    /// Where to accept switches
    #[arg(long, default_value = "127.0.0.1:6653", value_name = "ADDR:PORT")]
    listen: SocketAddr,
    /// What each PACKET_IN is answered with: flow-mod (one FLOW_MOD carrying its buffer
    /// id), packet-out (one PACKET_OUT, of the buffer or carrying the packet),
    /// flow-mod,packet-out (both: what a learning switch sends for an unbuffered
    /// packet), or learning-switch (one buffered FLOW_MOD for a buffered packet, both
    /// for an unbuffered one)
    #[arg(long, default_value = "flow-mod", value_name = "MESSAGES", value_parser = parse_answer)]
    answer: Answer,
    /// Hold each answer this many microseconds (a held PACKET_OUT carries no packet)
    #[arg(long, value_name = "N")]
    delay_us: Option<u64>,
    /// Worker threads [default: one per core]
    #[arg(long)]
    threads: Option<usize>,
    /// Stop after this many seconds [default: at Ctrl-C]
    #[arg(long, value_name = "SECS")]
    duration: Option<f64>,
}

pub(super) fn run(a: ResponderArgs) -> anyhow::Result<ExitCode> {
    let stop = stop_on_signals()?;
    let delay = a.delay_us.map(Duration::from_micros);
    let until = a
        .duration
        .map(|s| seconds(s, "--duration"))
        .transpose()?
        .map(|d| Instant::now() + d);
    let threads = a.threads.unwrap_or_else(cores);
    let opts = ResponderOptions {
        answer: a.answer,
        delay,
        threads,
        ..ResponderOptions::default()
    };
    let handle = run_responder_with(a.listen, opts, Arc::clone(&stop))
        .with_context(|| format!("listening on {}", a.listen))?;
    eprintln!(
        "pharos bench responder: listening on {} ({threads} threads{}); Ctrl-C to stop",
        handle.local_addr(),
        delay.map_or(String::new(), |d| format!(
            ", answers held {} µs",
            d.as_micros()
        ))
    );
    let start = Instant::now();
    let mut last = (Instant::now(), 0);
    while !stop.load(Ordering::SeqCst) && until.is_none_or(|u| Instant::now() < u) {
        std::thread::sleep(Duration::from_millis(100));
        let now = Instant::now();
        if now.duration_since(last.0) >= Duration::from_secs(1) {
            let answers = handle.answers_sent();
            eprintln!(
                "{} switches, {:.0} answers/s, {} answers",
                handle.accepted(),
                (answers - last.1) as f64 / now.duration_since(last.0).as_secs_f64(),
                answers
            );
            last = (now, answers);
        }
    }
    let (answers, packet_ins) = (handle.answers_sent(), handle.packet_ins_received());
    let messages = handle.messages_sent();
    handle.stop();
    eprintln!(
        "pharos bench responder: {packet_ins} PACKET_INs, {answers} answered with {messages} messages in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
