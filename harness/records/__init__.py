"""The records layer: a played game's forms (one codec), game records and run directories."""
