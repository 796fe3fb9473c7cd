"""What a student bundle of `seq2seq` carries: the scenarios and judges its public checks name.

Nothing here may import the rest of the plugin (checks, mistakes, bugs) or the reference.
"""
