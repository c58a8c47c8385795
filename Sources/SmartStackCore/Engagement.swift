/// What the user did with a stack, as the shell reports it.
public enum EngagementKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// The user opened the app from the widget.
    case tap
    /// The user rotated to this widget by hand; it then stays on top for the grace period.
    case swipeTo
    /// The user rotated away from this widget by hand.
    case swipeAway
    /// The widget was on top while the stack was visible (a look at the stack), with a duration.
    case impression
}
