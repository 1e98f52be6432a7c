"""Live API-Bench (liveapi): SQL questions compiled into SLOT, SEL and REST tool formulations."""
