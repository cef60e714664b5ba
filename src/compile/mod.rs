//! Stage 2: the rules of a policy compiled into one matcher per tool kind.
