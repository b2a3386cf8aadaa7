//! The page's files, embedded in the binary: plain HTML, CSS and JavaScript, no framework,
//! charts drawn as SVG by the script, so that the page works with no network beyond the
//! board itself and needs no build step.

/// The page: it holds no secret, and is served to anyone who asks the board's address.
pub const INDEX_HTML: &str = include_str!("assets/index.html");

/// The page's script.
pub const BOARD_JS: &str = include_str!("assets/board.js");

/// The reservations' part of the script, apart from the rest since it has one job: the marks
/// on the GPU cards and the timeline of the GPUs. Loaded before `board.js`, which calls it.
pub const RESERVATIONS_JS: &str = include_str!("assets/reservations.js");

/// The page's style.
pub const BOARD_CSS: &str = include_str!("assets/board.css");
