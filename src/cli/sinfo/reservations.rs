//! `sinfo -T` (`--reservation`): the reservations, one line each, as Slurm's sinfo prints
//! them (`print_sinfo_reservation`): the name column as wide as the longest name (at least
//! 9), and no width taken from the names without the header.

use crate::api::reservations::ReservationInfo;

/// The lines `sinfo -T` prints for `reservations` at `now` (`header`: without `-h`).
pub fn render(reservations: &[ReservationInfo], header: bool, now: u64) -> String {
    use crate::sys::format_local_time;
    if reservations.is_empty() {
        return "No reservations in the system\n".into();
    }
    let mut width = 9;
    let mut out = String::new();
    if header {
        width = reservations.iter().map(|r| r.name.len()).max().unwrap_or(0).max(9);
        out.push_str(&format!(
            "{:<width$}  {:>8}  {:>19}  {:>19}  {:>11}  {}\n",
            "RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST"
        ));
    }
    for r in reservations {
        let (start, end) = (r.start_time.number, r.end_time.number);
        let state = if start <= now && end >= now { "ACTIVE" } else { "INACTIVE" };
        out.push_str(&format!(
            "{:<width$}  {:>8}  {:>19}  {:>19}  {:>11}  {}\n",
            r.name,
            state,
            format_local_time(start),
            format_local_time(end),
            crate::options::time::format_hms(end.saturating_sub(start)),
            r.node_list
        ));
    }
    out
}

/// Runs `sinfo -T` (`long`: `-l`, the date line first, as Slurm's prints it).
pub fn run(header: bool, long: bool) -> i32 {
    let client = match crate::cli::connect("sinfo") {
        Ok(c) => c,
        Err(code) => return code,
    };
    match client.reservations(None) {
        Ok(reply) => {
            let now = crate::sys::now();
            if long {
                crate::cli::format::emit(&crate::cli::format::date_line(now));
            }
            print!("{}", render(&reply.reservations, header, now));
            0
        }
        Err(e) => {
            crate::cli::error("sinfo", &e.to_string());
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::noval::NoVal;

    #[test]
    fn names_set_the_first_column_and_active_ones_say_so() {
        use crate::sys::format_local_time as t;
        let r = |name: &str, start: u64, end: u64| ReservationInfo {
            name: name.into(),
            start_time: NoVal::of(start),
            end_time: NoVal::of(end),
            node_list: "node1".into(),
            ..Default::default()
        };
        let all = [r("resv_unlimited", 1_925_200_800, 1_956_736_800), r("now", 100, 200)];
        let out = render(&all, true, 150);
        let expected = format!(
            "RESV_NAME          STATE           START_TIME             END_TIME     DURATION  NODELIST\n\
             resv_unlimited  INACTIVE  {}  {}  365-00:00:00  node1\n\
             now               ACTIVE  {}  {}     00:01:40  node1\n",
            t(1_925_200_800),
            t(1_956_736_800),
            t(100),
            t(200)
        );
        assert_eq!(out, expected);
        assert!(render(&all, false, 150).contains("\nnow          ACTIVE"), "without the header the names take 9");
        assert_eq!(render(&[], true, 0), "No reservations in the system\n");
    }
}
