//! Reservations on the board: the card of each GPU one holds names it, with its window, the
//! card styled by whether it is active now or still to come, and the timeline of the GPUs has
//! a band over its window; one made or deleted while the page is open comes or goes without a
//! reload. Apart from the rest of the board's tests, whose browser and board it drives.

use super::*;

/// Makes a reservation with slurmrestd's call (`POST /slurm/v0.0.43/reservation`), as root
/// and the operators may.
fn reserve(c: &Cluster, desc: Value) {
    let reply: Value = c.client().post("/slurm/v0.0.43/reservation", &desc).expect("POST /reservation");
    assert_eq!(reply["errors"], json!([]), "{desc}: {reply}");
}

/// Removes reservation `name` (`DELETE /slurm/v0.0.43/reservation/NAME`).
fn unreserve(c: &Cluster, name: &str) {
    let reply: Value = c.client().delete(&format!("/slurm/v0.0.43/reservation/{name}")).expect("DELETE /reservation");
    assert_eq!(reply["errors"], json!([]), "{name}: {reply}");
}

/// A GPU's card and its reservations' lines and bands, as the page shows them now:
/// `{reserved, lines: [{name, state, maint, text}], bands: [{name, past, coming}]}`.
fn reservations_of_card(browser: &mut Browser, gpu: u32) -> Value {
    browser.eval(&format!(
        r#"(() => {{ const card = document.querySelector('[data-gpu="{gpu}"]');
             const lines = [...card.querySelectorAll('.reservation')].map((l) => ({{ name: l.dataset.reservation,
                 state: l.dataset.resvState, maint: l.dataset.maint !== undefined, text: l.textContent }}));
             const bands = [...document.querySelectorAll('#timeline svg[data-chart="timeline"] .band[data-gpu="{gpu}"]')]
                 .map((b) => ({{ name: b.dataset.reservation, past: !!b.querySelector('rect.past'),
                     coming: !!b.querySelector('rect.coming') }}));
             return {{ reserved: card.dataset.reserved || null, lines, bands }}; }})()"#
    ))
}

/// What a GPU reserved by none shows.
fn none() -> Value {
    json!({ "reserved": null, "lines": [], "bands": [] })
}

/// A reservation active now on GPU 0 shows on its card (with when it ends) and as a band on
/// the timeline; a maintenance one made later while the page is open appears as coming, and
/// turns active when the page's clock passes its start; GPU 1, reserved by none, shows none;
/// a deleted reservation leaves the page without a reload.
#[test]
fn reservations_show_on_their_gpus_cards_and_the_timeline() {
    let Some(program) = chromium() else {
        skip(
            "reservations_show_on_their_gpus_cards_and_the_timeline",
            "chromium is not installed (apt-get install chromium)",
        );
        return;
    };
    let _alone = timing_alone();
    // The test's user makes the reservations: an operator (root is one anyway).
    let (c, _machine) = fake_nvml::start_watching(&format!("operators = [\"{}\"]", me()));
    let now = slurmlet::sys::now();
    let minutes = |n: u32| json!({ "set": true, "number": n });
    let at = |t: u64| json!({ "set": true, "number": t });
    reserve(
        &c,
        json!({ "name": "train-run", "start_time": at(now), "duration": minutes(30), "users": [me()], "gpu_indices": [0] }),
    );
    let board = Board::start(&c);
    let mut browser = Browser::start(&program);
    browser.open(&board.url);
    browser.wait_for(
        "the active reservation on GPU 0's card and its band",
        T,
        r#"(() => { const card = document.querySelector('[data-gpu="0"]');
             const line = card && card.querySelector('.reservation[data-reservation="train-run"]');
             return !!line && line.dataset.resvState === "active" && card.classList.contains("reserved-active")
                 && !!document.querySelector('#timeline .band[data-reservation="train-run"][data-gpu="0"]'); })()"#,
    );
    let card = reservations_of_card(&mut browser, 0);
    assert_eq!(card["reserved"], "active", "{card}");
    let text = card["lines"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("train-run") && text.contains("until ") && !text.contains("MAINT"), "{card}");
    // Its band: the part to come (what is past of it is a second or two, maybe none yet).
    assert_eq!((&card["bands"][0]["name"], &card["bands"][0]["coming"]), (&json!("train-run"), &json!(true)), "{card}");
    assert_eq!(reservations_of_card(&mut browser, 1), none(), "GPU 1 is reserved by none");
    assert_eq!(browser.eval(r#"document.getElementById("timeline-box").hidden"#), json!(false));

    // A maintenance reservation of the same GPU two hours on, made while the page is open.
    reserve(
        &c,
        json!({ "name": "fix-fans", "start_time": at(now + 7200), "duration": minutes(60), "users": [me()],
                "flags": ["MAINT"], "gpu_indices": [0] }),
    );
    browser.wait_for(
        "the maintenance reservation on GPU 0's card",
        UPDATE,
        r#"!!document.querySelector('[data-gpu="0"] .reservation[data-reservation="fix-fans"]')"#,
    );
    let card = reservations_of_card(&mut browser, 0);
    assert_eq!(card["reserved"], "active", "the active one marks the card: {card}");
    let maint = &card["lines"][1];
    assert_eq!(
        (&maint["name"], &maint["state"], &maint["maint"]),
        (&json!("fix-fans"), &json!("coming"), &json!(true))
    );
    let text = maint["text"].as_str().unwrap_or_default();
    assert!(text.contains("from ") && text.contains("until ") && text.ends_with("MAINT"), "{card}");
    assert_eq!(card["bands"][1], json!({ "name": "fix-fans", "past": false, "coming": true }), "{card}");
    // Its band lies well right of the line of now; the active one's starts at it.
    let right_of_now = browser.eval(
        r#"(() => { const now = Number(document.querySelector('#timeline line.now').getAttribute("x1"));
             const x = (name) => Number(document.querySelector(`#timeline .band[data-reservation="${name}"] rect`).getAttribute("x"));
             return x("fix-fans") > now + 50 && Math.abs(x("train-run") - now) < 2; })()"#,
    );
    assert_eq!(right_of_now, json!(true));
    assert_eq!(reservations_of_card(&mut browser, 1), none());

    // The page's clock past the maintenance's start (and the first one's end): it turns
    // active and the first one leaves, with no change on the daemon; then back.
    browser.eval("window.__boardNow = now; now = () => __boardNow() + 7260; true");
    browser.wait_for(
        "the maintenance reservation active by the page's clock",
        UPDATE,
        r#"(() => { const card = document.querySelector('[data-gpu="0"]');
             const lines = [...card.querySelectorAll('.reservation')];
             return lines.length === 1 && lines[0].dataset.reservation === "fix-fans"
                 && lines[0].dataset.resvState === "active" && card.dataset.reserved === "active"
                 && !document.querySelector('#timeline .band[data-reservation="train-run"]')
                 && !!document.querySelector('#timeline .band[data-reservation="fix-fans"] rect.past')
                 && !!document.querySelector('#timeline .band[data-reservation="fix-fans"] rect.coming'); })()"#,
    );
    browser.eval("now = __boardNow; true");
    browser.wait_for(
        "both reservations back as they are",
        UPDATE,
        r#"document.querySelectorAll('[data-gpu="0"] .reservation').length === 2"#,
    );

    // Deleted, the active one leaves the card and the timeline; the card is marked for the
    // one to come.
    unreserve(&c, "train-run");
    browser.wait_for(
        "the deleted reservation to leave the page",
        UPDATE,
        r#"!document.querySelector('[data-reservation="train-run"]')"#,
    );
    let card = reservations_of_card(&mut browser, 0);
    assert_eq!(card["reserved"], "coming", "{card}");
    assert_eq!(
        browser.eval(r#"document.querySelector('[data-gpu="0"]').classList.contains("reserved-coming")"#),
        json!(true)
    );
    assert_eq!(card["bands"], json!([{ "name": "fix-fans", "past": false, "coming": true }]), "{card}");

    // The last one deleted: no mark, and no timeline.
    unreserve(&c, "fix-fans");
    browser.wait_for(
        "the last reservation to leave the page",
        UPDATE,
        r#"!document.querySelector('[data-reservation]') && !document.querySelector('[data-gpu="0"]').dataset.reserved
           && document.getElementById("timeline-box").hidden"#,
    );
}
