//! The login link as a QR code in the terminal, for a phone's camera.

use qrcode::QrCode;
use qrcode::render::unicode::Dense1x2;

/// The code as text, two modules a character, dark on light with a quiet zone; `None` when the
/// text does not fit a code.
pub fn render(text: &str) -> Option<String> {
    let code = QrCode::new(text.as_bytes()).ok()?;
    Some(
        code.render::<Dense1x2>()
            .dark_color(Dense1x2::Dark)
            .light_color(Dense1x2::Light)
            .quiet_zone(true)
            .build(),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_login_link_fits_a_code() {
        let link = format!("http://127.0.0.1:7878/login?token={}", "a".repeat(64));
        let code = super::render(&link).unwrap();
        let lines: Vec<&str> = code.lines().collect();
        assert!(lines.len() > 10, "{code}");
        assert!(code.contains('█') || code.contains('▀') || code.contains('▄'));
    }
}
