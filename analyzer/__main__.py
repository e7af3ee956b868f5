from mwms_doctor.cli import main

main()
