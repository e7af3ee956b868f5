"""What the emitters' own source says a message means, when no other rule knows it."""
