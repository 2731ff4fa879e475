"""Task generators: every data set in this project is generated here, from a seed."""
