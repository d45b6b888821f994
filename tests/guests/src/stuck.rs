//! What a guest that ran out of time was doing, read from its console: the command it was
//! running ([`COMMAND_MARKER`]), the watcher's dump ([`STUCK_MARKER`], see
//! [`crate::init_script`]), and whether the guest kernel itself stalled.

use super::*;

/// The command index of a console line ending with [`COMMAND_MARKER`]` i`.
pub(crate) fn command_marker(line: &str) -> Option<usize> {
    let (head, i) = line.trim_end().rsplit_once(' ')?;
    head.ends_with(COMMAND_MARKER).then(|| i.parse().ok())?
}

/// Lines of the kernel log that say the guest kernel itself stalled (soft and hard lockups,
/// RCU stalls): under TCG a kernel can lock up on an idle host (see [`BOOT_DEADLINE_S`]).
const KERNEL_STALL_WORDS: [&str; 4] = [
    "soft lockup",
    "hard LOCKUP",
    "rcu_sched self-detected stall",
    "rcu: INFO: rcu_",
];

/// What a guest that ran out of time was doing, read from its console.
pub(crate) struct Stuck {
    /// One paragraph for the failure: the command, and the console after its marker (the
    /// processes and kernel log of [`STUCK_MARKER`] when it came).
    pub(crate) words: String,
    /// The guest kernel stalled: its log names a lockup or an RCU stall, or the command's
    /// watcher never printed although the command ran past [`initramfs::stuck_after_s`] by
    /// 30 s (nothing in the guest ran any more).
    pub(crate) kernel_stall: bool,
}

impl Stuck {
    /// `command`: the last command marker seen, and how long before the deadline it came.
    pub(crate) fn read(
        guest: &Guest,
        commands: &[Vec<String>],
        lines: &[String],
        command: Option<(usize, Duration)>,
    ) -> Stuck {
        let from = lines
            .iter()
            .rposition(|l| command_marker(l).is_some())
            .map_or(0, |k| k + 1);
        let after: Vec<&str> = lines[from..]
            .iter()
            .map(String::as_str)
            .filter(|l| !l.contains("TCG doesn't support"))
            .collect();
        // the watcher's dump from its first line; else the console's last lines
        let dump = after.iter().position(|l| l.contains(STUCK_MARKER));
        let dumped = dump.is_some();
        let tail = match dump {
            Some(k) => &after[k..after.len().min(k + 150)],
            None => &after[after.len().saturating_sub(60)..],
        };
        let stall_words = tail
            .iter()
            .any(|l| KERNEL_STALL_WORDS.iter().any(|w| l.contains(w)));
        let frozen = command.is_some_and(|(_, ran)| {
            !dumped && ran > Duration::from_secs(initramfs::stuck_after_s(guest) + 30)
        });
        let which = match command {
            Some((i, ran)) => format!(
                "command {i} ({}) ran for the last {:.0} s",
                commands.get(i).map(|a| a.join(" ")).unwrap_or_default(),
                ran.as_secs_f64()
            ),
            None => "no command had started".to_owned(),
        };
        let words = format!(
            "{which}{}; the console after it:\n{}",
            if frozen {
                " and its watcher never printed (the guest ran nothing more)"
            } else {
                ""
            },
            tail.join("\n")
        );
        Stuck {
            words,
            kernel_stall: stall_words || frozen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn console(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| (*l).to_owned()).collect()
    }

    #[test]
    fn command_markers_are_read_after_the_firmware_escapes() {
        assert_eq!(command_marker("HWSURVEY-GUEST-COMMAND 7"), Some(7));
        assert_eq!(
            command_marker("\u{1b}[2JHWSURVEY-GUEST-COMMAND 12\r"),
            Some(12)
        );
        assert_eq!(command_marker("HWSURVEY-GUEST-COMMAND x"), None);
        assert_eq!(
            command_marker("HWSURVEY-GUEST-STUCK 3: running after 300 s"),
            None
        );
        assert_eq!(command_marker("[   51.78] reboot: Power down"), None);
    }

    /// A command that hung while the guest ran (its watcher printed, no stall in the kernel
    /// log) fails, naming the command and the dump; a lockup in the dump, or a watcher that
    /// never printed long after it was due, is the guest kernel's stall.
    #[test]
    fn a_stuck_guest_names_its_command_and_tells_a_kernel_stall() {
        let g = Guest::load("x86-offline-cgroup1").unwrap();
        assert_eq!(stuck_after_s(&g), 300);
        let commands = vec![words(&["hwsurvey", "probe"]), words(&["sync"])];
        let hung = console(&[
            "HWSURVEY-GUEST-COMMAND 0",
            "HWSURVEY-GUEST-COMMAND 1",
            "qemu-system-x86_64: warning: TCG doesn't support requested feature: x",
            "HWSURVEY-GUEST-STUCK 1: running after 300 s",
            "231 (sync) D wchan=wb_wait_for_completion sync",
        ]);
        let s = Stuck::read(&g, &commands, &hung, Some((1, Duration::from_secs(590))));
        assert!(!s.kernel_stall, "{}", s.words);
        assert!(
            s.words
                .starts_with("command 1 (sync) ran for the last 590 s; the console after it:\n"),
            "{}",
            s.words
        );
        assert!(
            s.words.contains("wchan=wb_wait_for_completion"),
            "{}",
            s.words
        );
        assert!(!s.words.contains("TCG"), "{}", s.words);

        let mut lockup = hung.clone();
        lockup
            .push("[  402.1] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [sync:231]".into());
        let s = Stuck::read(&g, &commands, &lockup, Some((1, Duration::from_secs(590))));
        assert!(s.kernel_stall, "{}", s.words);

        // no watcher line although the command ran 590 s (due after 300): nothing ran
        let frozen = console(&["HWSURVEY-GUEST-COMMAND 0", "HWSURVEY-GUEST-COMMAND 1"]);
        let s = Stuck::read(&g, &commands, &frozen, Some((1, Duration::from_secs(590))));
        assert!(s.kernel_stall, "{}", s.words);
        assert!(s.words.contains("its watcher never printed"), "{}", s.words);
        // ... but a command that began 200 s before the end was not yet due to be watched
        let s = Stuck::read(&g, &commands, &frozen, Some((1, Duration::from_secs(200))));
        assert!(!s.kernel_stall, "{}", s.words);
    }

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    /// Every command of the init is announced on the console and watched, and the watcher is
    /// stopped after it.
    #[test]
    fn the_init_announces_and_watches_every_command() {
        let g = Guest::load("x86-2s-2cpu").unwrap();
        let script = init_script(&g, &[words(&["true"]), words(&["hwsurvey", "probe"])]);
        for i in 0..2 {
            assert!(
                script.contains(&format!("echo {COMMAND_MARKER} {i}\n")),
                "{script}"
            );
            assert!(
                script.contains(&format!("echo {STUCK_MARKER} {i}: running after")),
                "{script}"
            );
        }
        assert_eq!(script.matches("kill $w").count(), 2, "{script}");
    }
}
