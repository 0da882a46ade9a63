"""Building what the judge or RM sees: retrieved posts and rendered templates."""
