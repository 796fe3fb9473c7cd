"""What every stage shares: errors, seeds, files replaced whole, tolerant comparison, the --set
selection and --device, and the helpers a scenario calls in the child.

May import: boundary.
"""
