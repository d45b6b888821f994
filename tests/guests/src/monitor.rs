//! qemu's human monitor (HMP) from the host during a run: what a run sends when its console
//! shows a marker ([`Injection`]: a machine check with `mce`, a PCIe error with
//! `pcie_aer_inject_error`), over the monitor's Unix socket in the run folder.

use super::*;

/// Host actions during a run: when a console line ends with `marker` (first time only), each
/// of `commands` is sent to qemu's human monitor (HMP, on a Unix socket of the run folder), one
/// after the other, each answered before the next ([`GuestRun::monitor`] keeps the answers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection {
    /// The end of the console line that triggers it (`HWSURVEY-INJECT`).
    pub marker: String,
    /// HMP commands: `mce 0 4 0xbd000000000000c0 0x5 0 0`,
    /// `pcie_aer_inject_error -c rp1 0x1`.
    pub commands: Vec<String>,
}

/// Most seconds the monitor may take to answer one command.
const MONITOR_ANSWER_S: u64 = 20;

/// Sends `commands` to the HMP monitor on `socket`, waiting for its prompt after each; returns
/// `(command, answer)` pairs (the answer without the prompt and the command's echo).
pub(crate) fn monitor_commands(
    socket: &Path,
    commands: &[String],
) -> Result<Vec<(String, String)>> {
    use std::os::unix::net::UnixStream;
    let mut stream = UnixStream::connect(socket)
        .with_context(|| format!("cannot connect to qemu's monitor {}", socket.display()))?;
    stream.set_read_timeout(Some(Duration::from_secs(MONITOR_ANSWER_S)))?;
    let read_to_prompt = |stream: &mut UnixStream| -> Result<String> {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&got).trim_end().ends_with("(qemu)") {
            let n = stream.read(&mut buf).with_context(|| {
                format!("qemu's monitor did not answer within {MONITOR_ANSWER_S} s")
            })?;
            if n == 0 {
                bail!("qemu's monitor closed the connection");
            }
            got.extend_from_slice(&buf[..n]);
        }
        Ok(String::from_utf8_lossy(&got).into_owned())
    };
    read_to_prompt(&mut stream)?;
    let mut out = Vec::new();
    for c in commands {
        stream.write_all(format!("{c}\n").as_bytes())?;
        let answer = read_to_prompt(&mut stream)?;
        // HMP echoes the command (with terminal escapes) before its answer
        let text: String = answer
            .lines()
            .filter(|l| !l.contains("(qemu)") && !l.contains(c.as_str()))
            .map(|l| l.trim_matches(|ch: char| ch.is_control() || ch == ' '))
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        out.push((c.clone(), text));
    }
    Ok(out)
}
